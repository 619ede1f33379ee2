#include "fabricbench/backends/nccl_log/nccl_log_report.hpp"

#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <map>

namespace fb::nccl_log {
namespace {

bool is_net(const Transport& t) { return t.kind == "NET"; }
bool is_mnnvl(const Transport& t) { return t.kind == "P2P" && t.mechanism == "MNNVL"; }

// Whether NCCL set the communicator up for multi-node NVLink: a comm line
// says "MNNVL 1", or two hosts already talk over P2P/MNNVL (so a rank that
// says "MNNVL 0" beside them is the odd one out, not a plain network job).
bool mnnvl_communicator(const Communicator& c) {
  if (c.mnnvl == 1) return true;
  for (const auto& [key, l] : c.links) {
    const std::string from = c.host_of(l.from), to = c.host_of(l.to);
    if (is_mnnvl(l.transport) && !from.empty() && !to.empty() && from != to) return true;
  }
  return false;
}

// Each rank's NVLink clique as one key, "<cluster UUID>/<clique id>": NCCL joins two GPUs in
// one domain only when both match (src/mnnvl.cc). A rank that logged only src/mnnvl.cc's line
// (no UUID) takes the UUID its clique's other ranks logged, when they agree on one.
std::map<int, std::string> clique_keys(const Communicator& c) {
  std::map<std::string, std::set<std::string>> uuids;  // clique id -> the UUIDs logged with it
  for (const auto& [r, info] : c.ranks)
    if (!info.clique_id.empty() && !info.cluster_uuid.empty()) uuids[info.clique_id].insert(info.cluster_uuid);
  std::map<int, std::string> out;
  for (const auto& [r, info] : c.ranks) {
    if (info.clique_id.empty()) continue;
    std::string uuid = info.cluster_uuid;
    const auto known = uuids.find(info.clique_id);
    if (uuid.empty() && known != uuids.end() && known->second.size() == 1) uuid = *known->second.begin();
    out[r] = uuid + "/" + info.clique_id;
  }
  return out;
}

std::string clique_uuid_of(const std::string& key) { return key.substr(0, key.rfind('/')); }
std::string clique_label_of(const std::string& key) { return "0x" + key.substr(key.rfind('/') + 1); }

// Host -> the cliques of its ranks (one, on a sane machine).
std::map<std::string, std::set<std::string>> host_cliques(const Communicator& c) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [r, key] : clique_keys(c))
    if (const std::string host = c.host_of(r); !host.empty()) out[host].insert(key);
  return out;
}

enum class CliqueRelation { unknown, shared, separate };

CliqueRelation clique_relation(const std::map<std::string, std::set<std::string>>& cliques, const std::string& a,
                               const std::string& b) {
  const auto x = cliques.find(a), y = cliques.find(b);
  if (x == cliques.end() || y == cliques.end()) return CliqueRelation::unknown;
  for (const auto& key : x->second)
    if (y->second.count(key)) return CliqueRelation::shared;
  return CliqueRelation::separate;
}

std::set<std::string> network_transports(const std::vector<Transport>& used) {
  std::set<std::string> nets;
  for (const auto& t : used)
    if (is_net(t)) nets.insert("NET/" + t.mechanism);
  return nets;
}

// Two hosts of an MNNVL communicator that use the network: a fallback unless NCCL logged
// them in different cliques (two racks joined by the network on purpose). Without cliques
// it stays a fallback, as before clique lines were read; the report says it could be either.
void judge_nvlink_pair(NodePair& p, const std::vector<Transport>& used,
                       const std::map<std::string, std::set<std::string>>& cliques) {
  const std::set<std::string> nets = network_transports(used);
  if (nets.empty()) return;
  if (clique_relation(cliques, p.a, p.b) == CliqueRelation::separate) {
    std::set<std::string> labels;
    for (const auto* host : {&p.a, &p.b})
      for (const auto& key : cliques.at(*host)) labels.insert(clique_label_of(key));
    p.across_nvlink_domains = true;
    p.verdict = fmt::format(
                    "two NVLink domains joined by the network: hosts {} and {} are in different NVLink "
                    "cliques ({}); ",
                    p.a, p.b, fmt::join(labels, ", ")) +
                p.verdict;
    return;
  }
  p.nvlink_fallback = true;
  p.verdict = fmt::format("NVLink domain fallback: hosts {} and {} are in one MNNVL communicator but connect over {}; ",
                          p.a, p.b, fmt::join(nets, ", ")) +
              p.verdict;
}

std::string node_of(const Communicator& c, int rank, const Transport& t, const std::string& other) {
  std::string host = c.host_of(rank);
  // P2P and SHM connect GPUs of one node, MNNVL aside: the unseen end is on the same node.
  if (host.empty() && (t.kind == "SHM" || (t.kind == "P2P" && t.mechanism != "MNNVL"))) host = other;
  return host.empty() ? fmt::format("node of rank {}", rank) : host;
}

std::string inter_node_verdict(const std::vector<Transport>& used) {
  std::vector<std::string> says;
  std::size_t net = 0, gdr = 0, socket = 0, pci = 0, pxn = 0, mnnvl = 0;
  std::set<std::string> names;
  for (const auto& t : used) {
    if (t.kind == "P2P" && t.mechanism == "MNNVL") ++mnnvl;
    if (!is_net(t)) continue;
    ++net;
    names.insert(t.mechanism);
    socket += t.mechanism == "Socket";
    gdr += t.gdr;
    pci += t.gdr_pci;
    pxn += t.via_rank >= 0;
  }
  if (mnnvl > 0) says.push_back("multi-node NVLink (P2P/MNNVL)");
  if (socket > 0)
    says.push_back(socket == net ? "inter-node traffic on NET/Socket: TCP fallback, not InfiniBand"
                                 : fmt::format("{} of {} channels on NET/Socket: TCP fallback beside the RDMA network",
                                               socket, net));
  const std::size_t rdma = net - socket;
  if (rdma > 0) {
    std::string nets;
    for (const auto& n : names)
      if (n != "Socket") nets += (nets.empty() ? "NET/" : ", NET/") + n;
    if (gdr == 0)
      says.push_back(fmt::format("no GPUDirect RDMA: {} traffic is staged through host memory", nets));
    else if (gdr < rdma)
      says.push_back(fmt::format("GPUDirect RDMA on {} of {} {} channels only", gdr, rdma, nets));
    else
      says.push_back(fmt::format("{} with GPUDirect RDMA{}", nets, pci == gdr ? " (through PCIe: GDRDMA(PCI))" : ""));
  }
  if (pxn > 0) says.push_back("PXN: some channels leave through another GPU's NIC on the node");
  if (says.empty()) says.push_back("no network transport named between these nodes");
  std::string out;
  for (const auto& s : says) out += (out.empty() ? "" : "; ") + s;
  return out;
}

std::string intra_node_verdict(const std::vector<Transport>& used) {
  std::set<std::string> kinds;
  for (const auto& t : used) kinds.insert(t.kind);
  std::vector<std::string> says;
  if (kinds.count("P2P")) says.push_back("GPU peer-to-peer (P2P)");
  if (kinds.count("SHM"))
    says.push_back("through host shared memory (SHM): no GPU peer-to-peer between these GPUs (disabled, or not "
                   "supported by the topology)");
  if (kinds.count("NET")) says.push_back("through the network inside one node: P2P and SHM not used");
  std::string out;
  for (const auto& s : says) out += (out.empty() ? "" : "; ") + s;
  return out.empty() ? "no transport named" : out;
}

std::string rank_label(const Communicator& c, int rank) {
  if (rank < 0) return "-";
  const auto it = c.ranks.find(rank);
  if (it == c.ranks.end() || it->second.host.empty()) return std::to_string(rank);
  return it->second.device >= 0 ? fmt::format("{} ({} GPU {})", rank, it->second.host, it->second.device)
                                : fmt::format("{} ({})", rank, it->second.host);
}

std::string algorithm_text(const Communicator& c) {
  std::string out;
  for (const auto& [f, algos] : c.algorithms) {
    std::string list;
    for (const auto& a : algos) list += (list.empty() ? "" : ", ") + a;
    out += fmt::format("{}{} {}", out.empty() ? "" : "; ", f, list);
  }
  return out;
}

int node_count(const Communicator& c) {
  if (c.nnodes > 0) return c.nnodes;
  std::set<std::string> hosts;
  for (const auto& [r, info] : c.ranks)
    if (!info.host.empty()) hosts.insert(info.host);
  return static_cast<int>(hosts.size());
}

std::string summary_line(const Communicator& c) {
  std::string versions, nets;
  for (const auto& v : c.versions) versions += (versions.empty() ? "" : ", ") + v;
  for (const auto& n : c.networks) nets += (nets.empty() ? "" : ", ") + n;
  std::string out = fmt::format("communicator {}: {} rank{}", c.id, c.nranks, c.nranks == 1 ? "" : "s");
  if (const int n = node_count(c); n > 0) out += fmt::format(" on {} node{}", n, n == 1 ? "" : "s");
  if (!versions.empty()) out += "; NCCL " + versions;
  if (!nets.empty()) out += "; network " + nets;
  return out;
}

std::string domain_line(const NvlinkDomain& d) {
  return fmt::format("clique {}{}: hosts {} ({} GPUs)", d.clique_id,
                     d.cluster_uuid.empty() ? "" : " (cluster UUID " + d.cluster_uuid + ")", fmt::join(d.hosts, ", "),
                     d.gpus);
}

nlohmann::ordered_json domain_json(const NvlinkDomain& d) {
  return {{"hosts", d.hosts}, {"gpus", d.gpus}, {"clique_id", d.clique_id}, {"cluster_uuid", d.cluster_uuid}};
}

// NCCL counts an NVLink clique as one node: say which hosts each domain spans, and whether
// the log can tell a fallback from domains joined by the network.
std::string nvlink_domain_text(const Communicator& c, const std::vector<NodePair>& pairs) {
  std::string out;
  if (const auto one = nvlink_domain(c)) {
    out += fmt::format("  one NVLink domain (MNNVL): hosts {} ({} GPUs), not nodes joined by a network\n",
                       fmt::join(one->hosts, ", "), one->gpus);
  } else if (const auto domains = nvlink_domains(c); !domains.empty() && !domains[0].clique_id.empty()) {
    // Only cliques NCCL logged name domains here; without them the node pairs say what is known.
    out += domains.size() > 1
               ? fmt::format("  {} NVLink domains (MNNVL cliques) joined by the network:\n", domains.size())
               : "  one NVLink domain (MNNVL), some of whose hosts connect over the network:\n";
    for (const auto& d : domains) out += "    " + domain_line(d) + "\n";
  }
  // A flagged pair with a host whose clique is not in the log (none logged, or a cut log) may be two racks.
  const auto cliques = host_cliques(c);
  bool unproven = false;
  for (const auto& p : pairs)
    unproven = unproven || (p.nvlink_fallback && clique_relation(cliques, p.a, p.b) == CliqueRelation::unknown);
  if (unproven)
    out +=
        "  note: NCCL did not log the NVLink clique of these ranks (\"MNNVL busId .. fabric UUID .. cliqueId ..\", "
        "NCCL_DEBUG_SUBSYS=INIT), so a fallback inside one NVLink domain cannot be told from two domains (racks) "
        "joined by the network on purpose\n";
  return out;
}

// NVML's fabric states (nvml.h NVML_GPU_FABRIC_STATE_*; NVML API reference, "Fabric definitions").
constexpr int kFabricStateCompleted = 3;

std::string fabric_state_name(int state) {
  // Indexed by NVML's value: a log's number may be any int, so no switch over an enum.
  static constexpr const char* kNames[] = {"not supported", "not started", "in progress", "completed"};
  return state >= 0 && state < static_cast<int>(std::size(kNames)) ? kNames[state] : "unknown to NVML's list";
}

// NVML's health mask is a row of fields (nvml.h NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_* and _WIDTH_*;
// NVML API reference, "Fabric definitions"). Each yes/no field is two bits: 0 not supported,
// 1 true (the fault), 2 false. NCCL's own copy of nvml.h (src/include/nvmlwrap.h) names the
// first one, degraded bandwidth at bit 0; the others came with later drivers.
struct YesNoField {
  unsigned shift;
  const char* fault;  // what "true" means, in NVML's words
};
constexpr YesNoField kYesNoFields[] = {
    {0, "bandwidth degraded"},                   // _DEGRADED_BW
    {2, "route recovery in progress"},           // _ROUTE_RECOVERY
    {4, "route unhealthy"},                      // _ROUTE_UNHEALTHY
    {6, "access timeout recovery in progress"},  // _ACCESS_TIMEOUT_RECOVERY
};
constexpr std::uint32_t kYesNoBits = 0x3;
constexpr std::uint32_t kYesNoTrue = 1;

// _INCORRECT_CONFIGURATION: four bits at bit 8; 0 not supported, 1 none, 2 and up a named fault.
constexpr unsigned kConfigShift = 8;
constexpr std::uint32_t kConfigBits = 0xf;

std::string configuration_fault(std::uint32_t value) {
  // NVML's values 2 to 7, in order; a later driver's new value is still named by its number.
  static constexpr const char* kFaults[] = {
      "SysGUID",         "chassis serial number", "no partition", "insufficient NVLinks", "incompatible GPU firmware",
      "invalid location"};
  const std::uint32_t at = value - 2;
  return at < std::size(kFaults) ? fmt::format("incorrect configuration: {}", kFaults[at])
                                 : fmt::format("incorrect configuration {}", value);
}

std::vector<std::string> fabric_problems(const FabricHealth& h) {
  std::vector<std::string> out;
  if (h.state && *h.state != kFabricStateCompleted)
    out.push_back(fmt::format("fabric state {} ({}), not completed", *h.state, fabric_state_name(*h.state)));
  if (h.health_mask) {
    if (const auto faults = health_mask_faults(*h.health_mask); !faults.empty())
      out.push_back(fmt::format("healthMask {:#x}: {}", *h.health_mask, fmt::join(faults, ", ")));
  }
  if (h.degraded_bw == "true") out.push_back("degradedBw true");
  return out;
}

std::string rank_with_bus_id(const Communicator& c, int rank) {
  const auto it = c.ranks.find(rank);
  const std::string bus = it == c.ranks.end() ? "" : it->second.bus_id;
  return "rank " + rank_label(c, rank) + (bus.empty() ? "" : " busId " + bus);
}

// Said only when a rank is flagged: a healthy log, or one without the fields, prints nothing here.
std::string fabric_health_text(const Communicator& c) {
  const auto flagged = nvlink_fabric_unhealthy_ranks(c);
  if (flagged.empty()) return {};
  std::string out = fmt::format(
      "  NVLink fabric not healthy on {} rank{} (may have fallen back from MNNVL or run at reduced NVLink "
      "bandwidth):\n",
      flagged.size(), flagged.size() == 1 ? "" : "s");
  for (const auto& f : flagged)
    out += fmt::format("    {}: {}\n", rank_with_bus_id(c, f.rank), fmt::join(f.problems, "; "));
  return out;
}

nlohmann::ordered_json unhealthy_rank_json(const Communicator& c, const UnhealthyFabricRank& f) {
  const RankInfo& info = c.ranks.at(f.rank);
  const FabricHealth& h = f.health;
  return {
      {"rank", f.rank},
      {"host", info.host},
      {"cuda_device", info.device},
      {"bus_id", info.bus_id},
      {"fabric_state", h.state ? nlohmann::ordered_json(*h.state) : nlohmann::ordered_json(nullptr)},
      {"health_mask",
       h.health_mask ? nlohmann::ordered_json(fmt::format("{:#x}", *h.health_mask)) : nlohmann::ordered_json(nullptr)},
      {"degraded_bw", h.degraded_bw.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(h.degraded_bw)},
      {"problems", f.problems}};
}

}  // namespace

std::vector<std::string> health_mask_faults(std::uint32_t mask) {
  std::vector<std::string> out;
  for (const auto& f : kYesNoFields)
    if (((mask >> f.shift) & kYesNoBits) == kYesNoTrue) out.push_back(f.fault);
  if (const std::uint32_t config = (mask >> kConfigShift) & kConfigBits; config >= 2)
    out.push_back(configuration_fault(config));
  return out;
}

std::vector<UnhealthyFabricRank> nvlink_fabric_unhealthy_ranks(const Communicator& comm) {
  std::vector<UnhealthyFabricRank> out;
  for (const auto& [r, info] : comm.ranks)
    if (auto problems = fabric_problems(info.fabric_health); !problems.empty())
      out.push_back({r, info.fabric_health, std::move(problems)});
  return out;
}

bool nvlink_fabric_health_logged(const Communicator& comm) {
  for (const auto& [r, info] : comm.ranks)
    if (info.fabric_health.logged()) return true;
  return false;
}

std::string channel_ranges(const std::set<int>& channels) {
  std::string out;
  for (auto it = channels.begin(); it != channels.end();) {
    int first = *it, last = *it;
    for (++it; it != channels.end() && *it == last + 1; ++it) last = *it;
    out += (out.empty() ? "" : ",") + (first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return out;
}

std::string verdict(bool inter_node, const std::vector<Transport>& used) {
  return inter_node ? inter_node_verdict(used) : intra_node_verdict(used);
}

std::vector<NodePair> node_pairs(const Communicator& comm) {
  struct Acc {
    std::set<std::string> tokens;
    std::vector<Transport> used;
    std::size_t channels = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> by_pair;
  for (const auto& [key, l] : comm.links) {
    if (l.to < 0) continue;  // CollNet: one rank and the switch
    const std::string from_host = comm.host_of(l.from);
    std::string a = node_of(comm, l.from, l.transport, comm.host_of(l.to));
    std::string b = node_of(comm, l.to, l.transport, from_host.empty() ? a : from_host);
    if (b < a) std::swap(a, b);
    Acc& acc = by_pair[{a, b}];
    acc.tokens.insert(l.token);
    for (std::size_t i = 0; i < l.channels.size(); ++i) acc.used.push_back(l.transport);
    acc.channels += l.channels.size();
  }
  const bool mnnvl = mnnvl_communicator(comm);
  const auto cliques = host_cliques(comm);
  std::vector<NodePair> out;
  for (const auto& [hosts, acc] : by_pair) {
    const bool inter_node = hosts.first != hosts.second;
    NodePair p{hosts.first, hosts.second, acc.tokens, acc.channels, verdict(inter_node, acc.used)};
    if (mnnvl && inter_node) judge_nvlink_pair(p, acc.used, cliques);
    out.push_back(std::move(p));
  }
  // Inter-node pairs first: the network is what the question is about.
  std::stable_sort(out.begin(), out.end(), [](const NodePair& x, const NodePair& y) { return (x.a != x.b) > (y.a != y.b); });
  return out;
}

std::optional<NvlinkDomain> nvlink_domain(const Communicator& comm) {
  if (!mnnvl_communicator(comm)) return std::nullopt;
  bool between_hosts = false;
  for (const auto& p : node_pairs(comm)) {
    if (p.a == p.b) continue;
    if (p.tokens != std::set<std::string>{"P2P/MNNVL"}) return std::nullopt;
    between_hosts = true;
  }
  if (!between_hosts) return std::nullopt;  // one host: nothing multi-node about it
  std::set<std::string> hosts;
  for (const auto& [r, info] : comm.ranks)
    if (!info.host.empty()) hosts.insert(info.host);
  NvlinkDomain d{
      {hosts.begin(), hosts.end()}, comm.nranks > 0 ? comm.nranks : static_cast<int>(comm.ranks.size()), "", ""};
  std::set<std::string> keys;
  for (const auto& [r, key] : clique_keys(comm)) keys.insert(key);
  if (keys.size() == 1) {  // name the clique only when every rank that logged one agrees
    d.clique_id = clique_label_of(*keys.begin());
    d.cluster_uuid = clique_uuid_of(*keys.begin());
  }
  return d;
}

std::vector<NvlinkDomain> nvlink_domains(const Communicator& comm) {
  if (!mnnvl_communicator(comm)) return {};
  const auto keys = clique_keys(comm);
  if (keys.empty()) {
    if (auto d = nvlink_domain(comm)) return {*d};
    return {};
  }
  std::map<std::string, NvlinkDomain> by_clique;
  std::map<std::string, std::set<std::string>> hosts;
  for (const auto& [r, key] : keys) {
    NvlinkDomain& d = by_clique[key];
    d.clique_id = clique_label_of(key);
    d.cluster_uuid = clique_uuid_of(key);
    ++d.gpus;
    if (const std::string host = comm.host_of(r); !host.empty()) hosts[key].insert(host);
  }
  std::vector<NvlinkDomain> out;
  for (auto& [key, d] : by_clique) {
    d.hosts.assign(hosts[key].begin(), hosts[key].end());
    out.push_back(std::move(d));
  }
  return out;
}

bool nvlink_cliques_logged(const Communicator& comm) {
  for (const auto& [r, info] : comm.ranks)
    if (!info.clique_id.empty()) return true;
  return false;
}

std::string missing_lines_hint(const Log& log) {
  if (log.nccl_lines == 0) return {};
  for (const auto& c : log.comms)
    if (!c.links.empty() || c.nranks == 1) return {};
  if (log.info_lines == 0)
    return "the log has NCCL warnings but no INFO lines: run with NCCL_DEBUG=INFO";
  bool any_comm = false;
  for (const auto& c : log.comms) any_comm = any_comm || !c.ranks.empty();
  if (!any_comm)
    return "the log has NCCL INFO lines but none about communicators: NCCL_DEBUG_SUBSYS must include INIT (its "
           "default does)";
  return "no connection lines: NCCL connects lazily (NCCL_RUNTIME_CONNECT=1), so a log cut before the first "
         "collective, or NCCL_DEBUG_SUBSYS without INIT, names no transports";
}

std::string format_text(const Log& log, const std::vector<std::string>& files) {
  std::string out = fmt::format("# fabricbench report nccl-log: {} file{}, {} NCCL lines, {} communicator{}\n",
                                files.size(), files.size() == 1 ? "" : "s", log.nccl_lines, log.comms.size(),
                                log.comms.size() == 1 ? "" : "s");
  for (const auto& c : log.comms) {
    out += "\n" + summary_line(c) + "\n";
    const auto pairs = node_pairs(c);
    out += nvlink_domain_text(c, pairs);
    out += fabric_health_text(c);
    out += fmt::format("  NVLS: {}   CollNet: {}\n",
                       c.nvls_channels > 0 ? fmt::format("{} channels", c.nvls_channels)
                                           : (c.nvls_support ? "supported, not set up" : "not used"),
                       c.collnet_connected ? "connected" : "not used");
    if (const std::string a = algorithm_text(c); !a.empty()) out += "  algorithms: " + a + "\n";
    if (c.links.empty())
      out += c.nranks == 1 ? "  one rank: no traffic between ranks\n" : "  no connection lines for this communicator\n";
    else
      out += "  rank -> rank: transport [channels]\n";
    for (const auto& [key, l] : c.links)
      out += fmt::format("    {} -> {}: {} [{}]{}\n", rank_label(c, l.from), rank_label(c, l.to), l.token,
                         channel_ranges(l.channels), l.transport.text.empty() ? "" : "  via " + l.transport.text);
    if (!pairs.empty()) out += "  node pairs:\n";
    for (const auto& p : pairs)
      out += fmt::format("    {}: {}\n", p.a == p.b ? p.a + " (inside the node)" : p.a + " <-> " + p.b, p.verdict);
  }
  if (const std::string hint = missing_lines_hint(log); !hint.empty()) out += "\nnote: " + hint + "\n";
  return out;
}

nlohmann::ordered_json format_json(const Log& log, const std::vector<std::string>& files) {
  nlohmann::ordered_json comms = nlohmann::ordered_json::array();
  for (const auto& c : log.comms) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array(), links = nlohmann::ordered_json::array(),
                           pairs = nlohmann::ordered_json::array();
    for (const auto& [r, info] : c.ranks)
      ranks.push_back({{"rank", r}, {"host", info.host}, {"pid", info.pid}, {"cuda_device", info.device},
                       {"bus_id", info.bus_id}});
    for (const auto& [key, l] : c.links)
      links.push_back({{"from", l.from}, {"to", l.to}, {"transport", l.token}, {"via", l.transport.text},
                       {"gdr", l.transport.gdr}, {"pxn_rank", l.transport.via_rank},
                       {"channels", std::vector<int>(l.channels.begin(), l.channels.end())}});
    for (const auto& p : node_pairs(c))
      pairs.push_back({{"a", p.a},
                       {"b", p.b},
                       {"inter_node", p.a != p.b},
                       {"transports", std::vector<std::string>(p.tokens.begin(), p.tokens.end())},
                       {"channels", p.channels},
                       {"verdict", p.verdict},
                       {"nvlink_fallback", p.nvlink_fallback},
                       {"across_nvlink_domains", p.across_nvlink_domains}});
    nlohmann::ordered_json domain = nullptr, domains = nlohmann::ordered_json::array();
    if (const auto d = nvlink_domain(c)) domain = domain_json(*d);
    for (const auto& d : nvlink_domains(c)) domains.push_back(domain_json(d));
    nlohmann::ordered_json unhealthy = nlohmann::ordered_json::array();
    for (const auto& f : nvlink_fabric_unhealthy_ranks(c)) unhealthy.push_back(unhealthy_rank_json(c, f));
    comms.push_back({{"id", c.id},
                     {"nranks", c.nranks},
                     {"nnodes", node_count(c)},
                     {"nvlink_domain", domain},
                     {"nvlink_domains", domains},
                     {"nvlink_cliques_logged", nvlink_cliques_logged(c)},
                     {"nvlink_fabric_health_logged", nvlink_fabric_health_logged(c)},
                     {"nvlink_fabric_unhealthy_ranks", unhealthy},
                     {"versions", c.versions},
                     {"networks", c.networks},
                     {"nvls_channels", c.nvls_channels},
                     {"nvls_support", c.nvls_support},
                     {"collnet_connected", c.collnet_connected},
                     {"algorithms", c.algorithms},
                     {"ranks", ranks},
                     {"links", links},
                     {"node_pairs", pairs}});
  }
  return {{"files", files},          {"nccl_lines", log.nccl_lines},
          {"versions", log.versions}, {"communicators", comms},
          {"note", missing_lines_hint(log)}};
}

std::string format_json_text(const Log& log, const std::vector<std::string>& files) {
  return format_json(log, files).dump(2) + "\n";
}

}  // namespace fb::nccl_log
