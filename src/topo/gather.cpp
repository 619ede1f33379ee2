// Every rank reads its own inventory; rank 0 collects the lines.
#include <unistd.h>

#include <cstdlib>

#include "fabricbench/topo/environment.hpp"
#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/report.hpp"
#include "fact_json.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

// The pids of the job's ranks on this rank's node: their GPU contexts are the
// job's own, not another user's. Collective.
std::vector<long> job_pids_here(const Comm& world, const NodeMap& nodes) {
  const auto pids = world.allgather_quiet(static_cast<std::int64_t>(getpid()));
  std::vector<long> here;
  for (std::size_t r = 0; r < pids.size() && r < nodes.rank_node.size(); ++r)
    if (nodes.rank_node[r] == nodes.node) here.push_back(static_cast<long>(pids[r]));
  return here;
}

json read_line(const NodeMap& nodes, int rank, std::vector<long> job_pids, const LinkedVersions& linked,
               const Sysfs& sysfs, Nvml& nvml, int device_option) {
  const RankPlace place{rank, nodes.node, nodes.local_rank, nodes.node_hosts[static_cast<std::size_t>(nodes.node)],
                        std::move(job_pids)};
  try {
    json line = to_json(read_inventory(sysfs, nvml, linked, place, CudaView::from_environment(device_option)));
    // Where the launcher bound this rank: next to its GPU's CPUs, or not.
    const auto cpus = process_cpus();
    line["rank_cpus"] = cpus ? json(*cpus) : json(nullptr);
    if (!cpus) line["unknown"]["rank_cpus"] = cpus.why();
    // The settings NCCL, UCX and Open MPI take from the environment and NCCL's files.
    line["environment"] = environment_json(EnvironmentSources::of_this_process());
    unknown_last(line);
    return line;
  } catch (const std::exception& e) {
    // The readers answer "unknown" for what the machine does not say; this is
    // for the unforeseen, and still keeps the line's shape.
    return {{"type", "inventory"},
            {"rank", place.rank},
            {"host", place.host},
            {"node", place.node},
            {"local_rank", place.local_rank},
            {"error", e.what()},
            {"gpus", json::array()},
            {"nics", json::array()},
            {"paths", json::array()}};
  }
}

}  // namespace

namespace {

// This rank's own line, and on rank 0 every rank's in rank order.
struct Gathered {
  json own;
  std::vector<json> lines;
};

Gathered gather_lines(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked, const Sysfs& sysfs,
                      Nvml& nvml, int device_option) {
  Gathered g;
  g.own = read_line(nodes, world.rank(), job_pids_here(world, nodes), linked, sysfs, nvml, device_option);
  for (const auto& text : world.gather_strings_quiet(g.own.dump(-1, ' ', false, json::error_handler_t::replace), 0))
    g.lines.push_back(json::parse(text));
  return g;
}

}  // namespace

std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   const Sysfs& sysfs, Nvml& nvml, int device_option) {
  return gather_lines(world, nodes, linked, sysfs, nvml, device_option).lines;
}

std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   int device_option) {
  const auto nvml = load_nvml();
  return gather_inventory(world, nodes, linked, Sysfs("/"), *nvml, device_option);
}

RecordedInventory record_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   int device_option) {
  const auto nvml = load_nvml();
  const Gathered inventory = gather_lines(world, nodes, linked, Sysfs("/"), *nvml, device_option);
  RecordedInventory out;
  out.differences = find_differences(inventory.lines);
  for (const auto& line : inventory.lines) out.lines.push_back(inventory_line(line));
  out.rank_domains = world.allgather_strings(rank_nvlink_domain(inventory.own));
  return out;
}

}  // namespace fb::topo
