// Every rank reads its own inventory; rank 0 collects the lines.
#include <cstdlib>

#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/report.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

json read_line(const NodeMap& nodes, int rank, const LinkedVersions& linked, const Sysfs& sysfs, Nvml& nvml,
               int device_option) {
  const RankPlace place{rank, nodes.node, nodes.local_rank, nodes.node_hosts[static_cast<std::size_t>(nodes.node)]};
  try {
    json line = to_json(read_inventory(sysfs, nvml, linked, place, CudaView::from_environment(device_option)));
    // Where the launcher bound this rank: next to its GPU's CPUs, or not.
    const auto cpus = process_cpus();
    line["rank_cpus"] = cpus ? json(*cpus) : json(nullptr);
    if (!cpus) line["unknown"]["rank_cpus"] = cpus.why();
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

std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   const Sysfs& sysfs, Nvml& nvml, int device_option) {
  const json line = read_line(nodes, world.rank(), linked, sysfs, nvml, device_option);
  std::vector<json> lines;
  for (const auto& text : world.gather_strings_quiet(line.dump(-1, ' ', false, json::error_handler_t::replace), 0))
    lines.push_back(json::parse(text));
  return lines;
}

std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   int device_option) {
  const auto nvml = load_nvml();
  return gather_inventory(world, nodes, linked, Sysfs("/"), *nvml, device_option);
}

}  // namespace fb::topo
