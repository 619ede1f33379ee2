// A leader's counter moves as text for the per-row gather (row_counters.hpp).
#include "fabricbench/core/row_counters.hpp"

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>

namespace fb {
namespace {

std::string flat(std::string text) {
  std::replace(text.begin(), text.end(), '\t', ' ');
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

}  // namespace

std::string encode_moves(const std::vector<CounterMove>& moves) {
  std::string out;
  for (const auto& m : moves)
    out += flat(m.device) + '\t' + flat(m.device_kind) + '\t' + flat(m.counter) + '\t' +
           (m.delta ? std::to_string(*m.delta) : "") + '\t' + flat(m.unknown_reason) + '\n';
  return out;
}

std::vector<CounterMove> decode_moves(const std::string& text) {
  std::vector<CounterMove> moves;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split_tabs(line);
    if (f.size() != 5) throw std::runtime_error("counter moves: a line without its 5 fields: " + line);
    CounterMove m{f[0], f[1], f[2], std::nullopt, f[4]};
    if (!f[3].empty()) {
      std::uint64_t v = 0;
      const auto [end, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), v);
      if (ec != std::errc() || end != f[3].data() + f[3].size())
        throw std::runtime_error("counter moves: '" + f[3] + "' is not a count");
      m.delta = v;
    }
    moves.push_back(std::move(m));
  }
  return moves;
}

bool row_uses(const RowReach& reach, std::string_view device_kind) {
  if (device_kind == "gpu") return reach.on_gpus;
  if (device_kind == "port" || device_kind == "interface" || device_kind == "pci" || device_kind == "node")
    return reach.left_node;
  return true;
}

std::vector<CounterLine> gather_counter_moves(const Comm& world, const NodeMap& nodes,
                                              const std::vector<CounterMove>& mine, const RowReach& reach) {
  std::int64_t moved[1] = {mine.empty() ? 0 : 1};
  world.allreduce_max_quiet(std::span<std::int64_t>(moved));
  if (moved[0] == 0) return {};
  const std::vector<std::string> all = world.gather_strings_quiet(encode_moves(mine), 0);
  std::vector<CounterLine> lines;
  for (std::size_t r = 0; r < all.size(); ++r)
    for (auto& move : decode_moves(all[r])) {
      CounterLine l;
      l.node = r < nodes.rank_node.size() ? nodes.rank_node[r] : -1;
      if (l.node >= 0 && static_cast<std::size_t>(l.node) < nodes.node_hosts.size())
        l.host = nodes.node_hosts[static_cast<std::size_t>(l.node)];
      l.device = std::move(move.device);
      l.device_kind = std::move(move.device_kind);
      l.exercised = row_uses(reach, l.device_kind);
      l.counter = std::move(move.counter);
      l.delta = move.delta;
      l.unknown_reason = std::move(move.unknown_reason);
      lines.push_back(std::move(l));
    }
  return lines;
}

}  // namespace fb
