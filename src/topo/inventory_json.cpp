// The inventory as a record line (docs/results-schema.md, "inventory").
#include <nlohmann/json.hpp>

#include "fact_json.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

using json = nlohmann::ordered_json;

json pcie_json(const PcieLink& l) {
  json j = {{"source", l.source}};
  put(j, "gen", l.gen);
  put(j, "width", l.width);
  put(j, "max_gen", l.max_gen);
  put(j, "max_width", l.max_width);
  put(j, "device_max_gen", l.device_max_gen);
  put(j, "peak_gbps", l.peak_gbps());
  unknown_last(j);
  return j;
}

json nvlink_json(const NvLinks& l) {
  json j;
  put(j, "links", l.present);
  j["active"] = l.active;
  j["down"] = l.down;
  put(j, "generation", l.generation);
  if (l.active > 0) {  // rates of links in use; nothing to rate without them
    put(j, "per_link_gbps", l.per_link_gbps());
    put(j, "total_gbps", l.total_gbps());
  }
  json peers = json::array();
  for (const auto& p : l.peers) peers.push_back({{"peer", p.peer}, {"links", p.links}});
  j["peers"] = peers;
  unknown_last(j);
  return j;
}

json user_json(const GpuUser& u) {
  json j = {{"pid", u.pid}};
  put(j, "name", u.name);
  put(j, "used_memory_bytes", u.used_memory_bytes);
  j["ours"] = u.ours;
  unknown_last(j);
  return j;
}

// The sharing facts sit in the GPU's object: compute_mode, mig, processes.
void put_sharing(json& j, const GpuSharing& s) {
  if (s.compute_mode) {
    j["compute_mode"] = compute_mode_name(*s.compute_mode);
  } else {
    j["compute_mode"] = nullptr;
    j["unknown"]["compute_mode"] = s.compute_mode.why();
  }
  put(j, "mig", s.mig);
  if (s.users) {
    json users = json::array();
    for (const auto& u : *s.users) users.push_back(user_json(u));
    j["processes"] = users;
  } else {
    j["processes"] = nullptr;
    j["unknown"]["processes"] = s.users.why();
  }
}

// The GPU's NVLink domain: its state always, the cluster and clique where
// the GPU takes part in a multi-node fabric.
void put_fabric(json& j, const Fact<GpuFabric>& f) {
  if (!f) {
    j["fabric"] = nullptr;
    j["unknown"]["fabric"] = f.why();
    return;
  }
  json out = {{"state", fabric_state_name(f->state)}};
  if (f->state != FabricState::not_supported) {
    out["cluster_uuid"] = f->cluster_uuid;
    out["clique_id"] = f->clique_id;
    out["domain"] = f->domain();
  }
  if (!f->status.empty()) out["status"] = f->status;
  j["fabric"] = out;
}

json gpu_json(const Gpu& g) {
  json j = {{"index", g.index}};
  put(j, "model", g.model);
  put(j, "uuid", g.uuid);
  put(j, "bus_id", g.bus_id);
  put(j, "memory_bytes", g.memory_bytes);
  put(j, "architecture", g.architecture);
  put(j, "pstate", g.pstate);
  put(j, "numa_node", g.numa_node);
  put(j, "cpu_affinity", g.cpu_affinity);
  j["pcie"] = pcie_json(g.pcie);
  j["nvlink"] = nvlink_json(g.nvlink);
  put_sharing(j, g.sharing);
  put_fabric(j, g.fabric);
  j["flags"] = g.flags;
  unknown_last(j);
  return j;
}

json nic_json(const Nic& n) {
  json j = {{"name", n.name}, {"kind", n.kind}};
  put(j, "state", n.state);
  j["up"] = n.up;
  if (n.kind != "Ethernet") {
    put(j, "phys_state", n.phys_state);
    put(j, "rate", n.rate);
    put(j, "link_layer", n.link_layer);
    j["netdevs"] = n.netdevs;
  }
  put(j, "rate_gbit", n.rate_gbit);
  put(j, "mtu_bytes", n.mtu_bytes);
  put(j, "firmware", n.firmware);
  put(j, "driver", n.driver);
  if (n.place) {
    j["bus_id"] = n.place->bus_id;
    put(j, "numa_node", n.place->numa_node);
  } else {
    j["bus_id"] = nullptr;
    j["unknown"]["bus_id"] = n.place.why();
  }
  json distance = json::object();
  for (const auto& [gpu, d] : n.gpu_distance) distance[gpu] = d;
  j["gpu_distance"] = distance;
  j["flags"] = n.flags;
  unknown_last(j);
  return j;
}

json path_json(const Path& p) {
  json j = {{"scope", p.scope}, {"class", p.cls}};
  j["peak_gbps"] = p.peak_gbps ? json(*p.peak_gbps) : json(nullptr);
  j["basis"] = p.basis;
  if (!p.peak_gbps) j["unknown_reason"] = p.peak_gbps.why();
  unknown_last(j);
  return j;
}

json software_json(const Software& s) {
  json j = json::object();
  put(j, "driver", s.driver);
  put(j, "nvml", s.nvml);
  put(j, "cuda_driver", s.cuda_driver);
  put(j, "cuda_runtime", s.cuda_runtime);
  put(j, "nccl", s.nccl);
  unknown_last(j);
  return j;
}

}  // namespace

json to_json(const Inventory& inv) {
  json j = {{"type", "inventory"},
            {"rank", inv.place.rank},
            {"host", inv.place.host},
            {"node", inv.place.node},
            {"local_rank", inv.place.local_rank}};
  put(j, "rank_gpu", inv.rank_gpu);
  j["software"] = software_json(inv.software);
  json gpus = json::array();
  for (const auto& g : inv.gpus) gpus.push_back(gpu_json(g));
  j["gpus"] = gpus;
  if (!inv.gpus_note.empty()) j["gpus_note"] = inv.gpus_note;
  j["gpu_matrix"] = inv.gpu_matrix;
  json nics = json::array();
  for (const auto& n : inv.nics) nics.push_back(nic_json(n));
  j["nics"] = nics;
  json rails = json::array();
  for (const auto& r : inv.rails) rails.push_back({{"gpu", r.gpu}, {"nics", r.nics}, {"distance", r.distance}});
  j["rails"] = rails;
  json paths = json::array();
  for (const auto& p : inv.paths) paths.push_back(path_json(p));
  j["paths"] = paths;
  j["flags"] = inv.flags;
  unknown_last(j);
  return j;
}

}  // namespace fb::topo
