#include "fabric_health.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/text_table.hpp"
#include "fabricbench/topo/counters.hpp"
#include "fabricbench/topo/nvml.hpp"

namespace fb::cli {
namespace {

constexpr const char* kCountersRootVariable = "FABRICBENCH_COUNTERS_ROOT";

std::string counters_root(const std::string& where, int node) {
  std::string root = where;
  for (auto at = root.find("{node}"); at != std::string::npos; at = root.find("{node}"))
    root.replace(at, 6, std::to_string(node));
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    throw UsageError(
        fmt::format("--counters {} (or {}): '{}' is not a folder; give the folder that holds sys/ and "
                    "proc/, or off",
                    where, kCountersRootVariable, root));
  return root;
}

// What one node's device counter did over the run.
struct Moved {
  std::uint64_t delta = 0;  // over the rows where it is known
  std::size_t rows = 0;     // rows where it moved or became unknown
  std::size_t used = 0;     // those of them that used the device (their scope reached it)
  std::size_t unknown = 0;  // rows whose delta is unknown
  std::string first_reason;
  std::set<std::string> pairs;  // pairs: the node pairs measured while it moved ("n1-n2")
};

// What a reader must know beside the figures: rows whose change is unknown,
// and a device that moved only while the rows measured something else.
std::string remark(const Moved& m) {
  std::vector<std::string> notes;
  if (m.unknown) notes.push_back(fmt::format("{} rows unknown: {}", m.unknown, m.first_reason));
  if (m.used == 0) notes.push_back("no row that used it was measured while it moved");
  return fmt::format("{}", fmt::join(notes, "; "));
}

class FabricHealthSink final : public RowSink {
 public:
  FabricHealthSink(std::FILE* out, std::string command) : out_(out), command_(std::move(command)) {}
  void begin(const RunHeader&) override {}
  void measurement(const Measurement&) override {}
  void skip(const Skip&) override {}
  void record_line(const RecordLine& line) override {
    if (const auto* p = std::get_if<PairLine>(&line)) pairs_.push_back(p->host_a + "-" + p->host_b);
    const auto* c = std::get_if<CounterLine>(&line);
    if (!c) return;
    Moved& m = moved_[{c->node, c->host, c->device, c->counter}];
    ++m.rows;
    if (c->exercised) ++m.used;
    // A link whose bandwidth passed can still be failing: name the pair it measured.
    if (c->op == kPairsCounterOp && c->row < pairs_.size()) m.pairs.insert(pairs_[c->row]);
    if (c->delta) {
      m.delta += *c->delta;
    } else if (m.unknown++ == 0) {
      m.first_reason = c->unknown_reason;
    }
  }
  void end(const Summary&) override {
    if (moved_.empty()) return;
    const bool of_pairs = !pairs_.empty();
    TextTable t;
    t.columns = {{"node"},
                 {"host"},
                 {"device"},
                 {"counter"},
                 {"delta", Align::right},
                 {"rows", Align::right},
                 {"using it", Align::right}};
    if (of_pairs) t.columns.push_back({"pairs"});
    t.head_prefix = "# ";
    t.row_prefix = "  ";
    for (const auto& [key, m] : moved_) {
      const auto& [node, host, device, counter] = key;
      std::vector<std::string> cells{
          std::to_string(node),  host, device, counter, fmt::format("{}", m.delta), std::to_string(m.rows),
          std::to_string(m.used)};
      if (of_pairs) cells.push_back(fmt::format("{}", fmt::join(m.pairs, " ")));
      t.add_row(cells, remark(m));
    }
    std::fprintf(out_, "%s: fabric health: error counters that moved during measured rows (docs/run.md)\n",
                 command_.c_str());
    std::fputs(render(t).c_str(), out_);
  }

 private:
  std::FILE* out_;
  std::string command_;
  std::map<std::tuple<int, std::string, std::string, std::string>, Moved> moved_;
  std::vector<std::string> pairs_;  // each pair line's nodes, in record order (a pairs counter line's row)
};

}  // namespace

void add_counters_option(CLI::App& app, std::string& where) {
  app.add_option("--counters", where,
                 "where each node's leader reads its error counters around every row: / (its own /sys and /proc), "
                 "a copied tree ({node} = the node's index), or off (none read; a counters rule cannot be judged)")
      ->envname(kCountersRootVariable)
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) { return v.empty() ? std::string("an empty root; give /, a folder or off") : ""; },
          "ROOT"));
}

std::unique_ptr<RowCounters> make_node_counters(const NodeMap& nodes, const std::string& where) {
  if (where == kCountersOff) return nullptr;
  // Only the leader reads (the engine asks no one else), so only it loads
  // NVML; where the driver is absent load_nvml says so and no GPU is read.
  auto nvml = nodes.local_rank == 0 ? topo::load_nvml() : nullptr;
  return topo::make_row_counters(topo::Sysfs(counters_root(where, nodes.node)), std::move(nvml));
}

std::unique_ptr<RowSink> make_fabric_health_sink(std::FILE* out, std::string command) {
  return std::make_unique<FabricHealthSink>(out, std::move(command));
}

}  // namespace fb::cli
