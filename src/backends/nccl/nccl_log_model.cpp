#include "fabricbench/backends/nccl_log/nccl_log_model.hpp"

#include <algorithm>

namespace fb::nccl_log {
namespace {

constexpr std::size_t kMaxWarnings = 20;
constexpr const char* kUnnamed = "unnamed";

void merge_into(Communicator& into, const Communicator& from) {
  into.nranks = std::max(into.nranks, from.nranks);
  into.nnodes = std::max(into.nnodes, from.nnodes);
  into.mnnvl = std::max(into.mnnvl, from.mnnvl);
  for (const auto& [r, info] : from.ranks) {
    auto [at, fresh] = into.ranks.emplace(r, info);
    if (fresh) continue;
    // The clique line may sit in the half that lacked the commId (an older NCCL names it late).
    if (at->second.cluster_uuid.empty()) at->second.cluster_uuid = info.cluster_uuid;
    if (at->second.clique_id.empty()) at->second.clique_id = info.clique_id;
    if (!at->second.fabric_health.logged()) at->second.fabric_health = info.fabric_health;
  }
  for (const auto& [key, link] : from.links) {
    auto [at, fresh] = into.links.emplace(key, link);
    if (!fresh) at->second.channels.insert(link.channels.begin(), link.channels.end());
  }
  into.versions.insert(from.versions.begin(), from.versions.end());
  into.networks.insert(from.networks.begin(), from.networks.end());
  into.path_types.insert(from.path_types.begin(), from.path_types.end());
  into.nvls_channels = std::max(into.nvls_channels, from.nvls_channels);
  into.nvls_support = into.nvls_support || from.nvls_support;
  into.collnet_connected = into.collnet_connected || from.collnet_connected;
  for (const auto& [f, algos] : from.algorithms) into.algorithms[f].insert(algos.begin(), algos.end());
}

void set_clique(RankInfo& r, const CliqueLine& c) {
  if (!c.cluster_uuid.empty()) r.cluster_uuid = c.cluster_uuid;  // src/mnnvl.cc's line omits it: keep fillInfo's
  r.clique_id = c.clique_id;
  if (c.health.logged()) r.fabric_health = c.health;  // src/mnnvl.cc's line says nothing of it: keep fillInfo's
}

}  // namespace

std::string Communicator::host_of(int rank) const {
  const auto it = ranks.find(rank);
  return it == ranks.end() ? std::string() : it->second.host;
}

std::size_t LogReader::new_comm(std::string id) {
  comms_.emplace_back();
  comms_.back().id = std::move(id);
  return comms_.size() - 1;
}

void LogReader::on_comm(Process& p, const Writer& w, const CommLine& c) {
  ProcComm* mine = nullptr;
  if (c.stage != CommStage::start) {
    for (auto it = p.comms.rbegin(); it != p.comms.rend() && !mine; ++it)
      if (it->ptr == c.comm) mine = &*it;
  }
  if (!mine) {
    // A new communicator of this process (NCCL may reuse a destroyed one's address).
    std::size_t index = 0;
    if (!c.comm_id.empty() && by_id_.count(c.comm_id)) {
      index = by_id_[c.comm_id];
    } else {
      index = new_comm(c.comm_id.empty() ? std::string() : c.comm_id);
      if (!c.comm_id.empty()) by_id_[c.comm_id] = index;
    }
    p.comms.push_back({c.comm, c.rank, index});
    mine = &p.comms.back();
    if (!p.version.empty()) comms_[index].versions.insert(p.version);
    if (!p.network.empty()) comms_[index].networks.insert(p.network);
  }
  if (!c.comm_id.empty() && comms_[mine->comm].id != c.comm_id) {
    // Named late (an older NCCL prints the commId only at Init COMPLETE).
    if (const auto it = by_id_.find(c.comm_id); it != by_id_.end() && it->second != mine->comm) {
      merge_into(comms_[it->second], comms_[mine->comm]);
      comms_[mine->comm] = Communicator{};
      comms_[mine->comm].id = "";  // emptied; skipped at the end
      for (auto& [key, proc] : processes_)
        for (auto& pc : proc.comms)
          if (pc.comm == mine->comm) pc.comm = it->second;
    } else {
      comms_[mine->comm].id = c.comm_id;
      by_id_[c.comm_id] = mine->comm;
    }
  }
  Communicator& cm = comms_[mine->comm];
  mine->rank = c.rank;
  if (c.nranks > 0) cm.nranks = c.nranks;
  if (c.nnodes > 0) cm.nnodes = c.nnodes;
  cm.mnnvl = std::max(cm.mnnvl, c.mnnvl);
  RankInfo& r = cm.ranks[c.rank];
  r.host = w.host;
  r.pid = w.pid;
  r.device = c.cuda_device >= 0 ? c.cuda_device : (r.device >= 0 ? r.device : w.device);
  if (!c.bus_id.empty()) r.bus_id = c.bus_id;
  if (p.clique) {
    set_clique(r, *p.clique);
    p.clique.reset();
  }
}

void LogReader::on_clique(Process& p, const CliqueLine& c) {
  // NCCL prints it while setting up the communicator this process started last (src/init.cc
  // fillInfo, src/mnnvl.cc), after its "Init START" line; without one yet, keep it for the next.
  if (p.comms.empty() || p.comms.back().rank < 0) {
    p.clique = c;
    return;
  }
  const ProcComm& pc = p.comms.back();
  set_clique(comms_[pc.comm].ranks[pc.rank], c);
}

std::size_t LogReader::comm_for(Process& p, const Line& line) {
  const auto& conn = line.connection;
  const std::string* ptr = line.tuning && !line.tuning->comm.empty() ? &line.tuning->comm : nullptr;
  for (auto it = p.comms.rbegin(); it != p.comms.rend(); ++it) {
    if (ptr) {
      if (it->ptr == *ptr) return it->comm;
      continue;
    }
    if (!conn) return it->comm;
    const Communicator& cm = comms_[it->comm];
    const int top = std::max(conn->from, conn->to);
    const int me = conn->side == Side::receive ? conn->to : conn->from;
    if ((cm.nranks < 0 || top < cm.nranks) && (it->rank < 0 || it->rank == me)) return it->comm;
  }
  if (!p.comms.empty()) return p.comms.back().comm;
  // No communicator lines in this process (an old NCCL, or INIT lines filtered out): one shared bucket.
  if (!by_id_.count(kUnnamed)) by_id_[kUnnamed] = new_comm(kUnnamed);
  p.comms.push_back({"", -1, by_id_[kUnnamed]});
  return by_id_[kUnnamed];
}

void LogReader::add_line(const Line& line, std::string_view text) {
  if (line.version) totals_.versions.insert(*line.version);
  if (!line.nccl) return;
  ++totals_.nccl_lines;
  if (!line.writer.host.empty()) totals_.hosts.insert(line.writer.host);
  if (line.level == "WARN" && totals_.warnings.size() < kMaxWarnings) totals_.warnings.emplace_back(text);
  if (line.level != "INFO") return;
  ++totals_.info_lines;
  Process& p = processes_[line.writer.process()];
  if (line.version) p.version = *line.version;
  if (line.network) p.network = *line.network;
  if (line.comm) on_comm(p, line.writer, *line.comm);
  if (line.clique) on_clique(p, *line.clique);
  const bool about_comm = line.connection || line.channels || line.tuning || line.nvls_support ||
                          !line.path_types.empty() || (line.network && !p.comms.empty());
  if (!about_comm) return;
  Communicator& cm = comms_[comm_for(p, line)];
  if (line.network) cm.networks.insert(*line.network);
  if (!p.version.empty()) cm.versions.insert(p.version);
  if (const auto& c = line.connection) {
    if (c->to < 0) cm.collnet_connected = true;
    Link& l = cm.links[{c->from, c->to, token(c->transport)}];
    if (l.token.empty()) l = {c->from, c->to, token(c->transport), c->transport, {}};
    l.channels.insert(c->channel);
    // The sender's process wrote it: that is where `from` runs.
    const int me = c->side == Side::receive ? c->to : c->from;
    if (me >= 0 && !cm.ranks.count(me))
      cm.ranks[me] = {line.writer.host, line.writer.pid, line.writer.device, "", "", "", {}};
  }
  if (const auto& n = line.channels) {
    cm.nvls_channels = std::max(cm.nvls_channels, n->nvls);
  }
  if (const auto& t = line.tuning) cm.algorithms[t->function].insert(t->algorithm + "/" + t->protocol);
  cm.nvls_support = cm.nvls_support || line.nvls_support;
  cm.path_types.insert(line.path_types.begin(), line.path_types.end());
}

void LogReader::add(std::string_view text) {
  for (const auto l : lines_of(text)) add_line(parse_line(l), l);
}

Log LogReader::finish() const {
  Log out = totals_;
  for (const auto& c : comms_)
    if (!c.id.empty() || !c.links.empty() || !c.ranks.empty()) out.comms.push_back(c);
  int unnamed = 0;
  for (auto& c : out.comms)
    if (c.id.empty()) c.id = "unnamed-" + std::to_string(++unnamed);
  for (auto& c : out.comms) {
    if (c.nranks > 0) continue;
    int top = -1;  // no communicator line: at least as many ranks as the links name
    for (const auto& [key, l] : c.links) top = std::max({top, l.from, l.to});
    for (const auto& [r, info] : c.ranks) top = std::max(top, r);
    c.nranks = top + 1;
  }
  return out;
}

Log read_log(std::string_view text) {
  LogReader r;
  r.add(text);
  return r.finish();
}

}  // namespace fb::nccl_log
