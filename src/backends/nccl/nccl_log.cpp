#include "nccl_log.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "fabricbench/backends/nccl_log/nccl_log_line.hpp"

namespace fb {
namespace {

int order_of(const std::string& transport) {
  if (transport.rfind("P2P", 0) == 0) return 0;
  if (transport == "SHM") return 1;
  if (transport.rfind("NET", 0) == 0) return 2;
  if (transport == "NVLS") return 3;
  if (transport == "CollNet" || transport.rfind("COLLNET", 0) == 0) return 4;
  return 5;
}

void sort_tokens(std::vector<std::string>& tokens) {
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  std::stable_sort(tokens.begin(), tokens.end(),
                   [](const std::string& a, const std::string& b) { return order_of(a) < order_of(b); });
}

std::string joined(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

// NVL: NVLink; NVB: NVLink through another GPU; C2C: the chip-to-chip link.
// Every other type NCCL prints inside a node (PIX, PXB, PXN, P2C, PHB, SYS) is PCIe.
std::string link_of(const std::set<std::string>& intra_types) {
  if (intra_types.count("NVL") || intra_types.count("NVB")) return "NVLink";
  if (intra_types.count("C2C")) return "C2C";
  for (const char* pcie : {"PIX", "PXB", "PXN", "P2C", "PHB", "SYS"})
    if (intra_types.count(pcie)) return "PCIe";
  return {};
}

// NVLS and CollNet carry these collectives (NCCL 2.18+); the others run on the channels.
bool served_by_nvls_or_collnet(Op op) {
  return op == Op::all_reduce || op == Op::all_gather || op == Op::reduce_scatter;
}

constexpr std::array kFunctions{std::pair{Op::all_reduce, "AllReduce"}, std::pair{Op::all_gather, "AllGather"},
                                std::pair{Op::reduce_scatter, "ReduceScatter"}, std::pair{Op::broadcast, "Broadcast"},
                                std::pair{Op::reduce, "Reduce"}};

// "A+B algo X;Y" -> tokens {A, B}, algorithms {X, Y}.
void split_description(const std::string& d, std::vector<std::string>& tokens, std::vector<std::string>& algos) {
  const std::size_t space = d.find(' ');
  std::string head = d.substr(0, space);
  for (std::size_t pos = 0; pos <= head.size();) {
    const std::size_t plus = head.find('+', pos);
    tokens.push_back(head.substr(pos, plus == std::string::npos ? std::string::npos : plus - pos));
    if (plus == std::string::npos) break;
    pos = plus + 1;
  }
  const std::size_t at = d.find(" algo ");
  if (at == std::string::npos) return;
  const std::string list = d.substr(at + 6, d.find(' ', at + 6) - at - 6);
  for (std::size_t pos = 0; pos <= list.size();) {
    const std::size_t semi = list.find(';', pos);
    algos.push_back(list.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos));
    if (semi == std::string::npos) break;
    pos = semi + 1;
  }
}

}  // namespace

std::string_view nccl_function(Op op) {
  for (const auto& [o, f] : kFunctions)
    if (o == op) return f;
  return {};
}

namespace {

// `pair`: only connections between these two ranks count (see the header).
NcclLogFacts parse_facts(std::string_view text, std::optional<std::pair<int, int>> pair) {
  const auto counts = [&](const nccl_log::Connection& c) {
    return !pair || (c.from == pair->first && c.to == pair->second) || (c.from == pair->second && c.to == pair->first);
  };
  NcclLogFacts facts;
  for (const auto raw : nccl_log::lines_of(text)) {
    const nccl_log::Line l = nccl_log::parse_line(raw);
    if (l.version) facts.version = *l.version;
    if (l.network) facts.network = *l.network;
    if (l.connection && counts(*l.connection)) {
      facts.transports.insert(nccl_log::token(l.connection->transport));
      facts.collnet = facts.collnet || l.connection->transport.kind == "COLLNET";
    }
    if (l.channels) facts.nvls_channels = std::max(facts.nvls_channels, l.channels->nvls);
    if (l.tuning) facts.algorithms[l.tuning->function].insert(l.tuning->algorithm + "/" + l.tuning->protocol);
    facts.intra_types.insert(l.path_types.begin(), l.path_types.end());
  }
  // CollNet's own lines are not channels between two ranks: they show as "+CollNet".
  for (auto it = facts.transports.begin(); it != facts.transports.end();)
    it = it->rfind("COLLNET", 0) == 0 ? facts.transports.erase(it) : std::next(it);
  return facts;
}

}  // namespace

NcclLogFacts parse_nccl_log(std::string_view text) { return parse_facts(text, std::nullopt); }

NcclLogFacts parse_nccl_log(std::string_view text, int rank_a, int rank_b) {
  return parse_facts(text, std::pair{rank_a, rank_b});
}

std::string describe_nccl_path(const NcclLogFacts& facts, int nranks) {
  std::vector<std::string> tokens(facts.transports.begin(), facts.transports.end());
  if (tokens.empty()) return nranks <= 1 ? "local" : "unknown";
  sort_tokens(tokens);
  const std::string link = link_of(facts.intra_types);
  for (auto& t : tokens)
    if (order_of(t) == 0 && !link.empty()) t += "/" + link;
  return joined(tokens, '+');
}

std::string describe_nccl_path(const NcclLogFacts& facts, int nranks, Op op) {
  std::string out = describe_nccl_path(facts, nranks);
  if (nranks > 1 && served_by_nvls_or_collnet(op)) {
    std::string extra;
    if (facts.nvls_channels > 0) extra += "+NVLS";
    if (facts.collnet) extra += "+CollNet";
    if (!extra.empty()) out = (out == "unknown" ? extra.substr(1) : out + extra);
  }
  const auto algos = facts.algorithms.find(std::string(nccl_function(op)));
  if (algos != facts.algorithms.end() && !algos->second.empty())
    out += " algo " + joined(std::vector<std::string>(algos->second.begin(), algos->second.end()), ';');
  return out;
}

std::string merge_nccl_paths(const std::vector<std::string>& per_rank) {
  std::vector<std::string> tokens, algos;
  for (const auto& d : per_rank) split_description(d, tokens, algos);
  const bool any_local = std::count(tokens.begin(), tokens.end(), "local") > 0;
  std::erase_if(tokens, [](const std::string& t) { return t.empty() || t == "local" || t == "unknown"; });
  std::erase_if(algos, [](const std::string& a) { return a.empty(); });
  std::string out;
  if (tokens.empty()) {
    out = any_local && per_rank.size() <= 1 ? "local" : "unknown";
  } else {
    sort_tokens(tokens);
    out = joined(tokens, '+');
  }
  if (!algos.empty()) {
    std::sort(algos.begin(), algos.end());
    algos.erase(std::unique(algos.begin(), algos.end()), algos.end());
    out += " algo " + joined(algos, ';');
  }
  return out;
}

std::string pinned_tuning(const char* algo, const char* proto) {
  std::string out;
  for (const auto& [name, value] : {std::pair{"NCCL_ALGO", algo}, std::pair{"NCCL_PROTO", proto}}) {
    if (!value || !*value) continue;
    std::string v(value);
    std::replace(v.begin(), v.end(), ',', ';');
    out += " " + std::string(name) + "=" + v;
  }
  return out;
}

}  // namespace fb
