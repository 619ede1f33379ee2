// Every rank reads its own inventory; rank 0 collects the lines.
#include <mpi.h>

#include <cstdlib>
#include <numeric>

#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/report.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

json read_line(const NodeMap& nodes, int rank, const LinkedVersions& linked, const Sysfs& sysfs, Nvml& nvml) {
  const RankPlace place{rank, nodes.node, nodes.local_rank, nodes.node_hosts[static_cast<std::size_t>(nodes.node)]};
  try {
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    json line = to_json(
        read_inventory(sysfs, nvml, linked, place, cvd ? std::optional<std::string>(cvd) : std::nullopt));
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

// Rank 0 receives every rank's text, in rank order.
std::vector<std::string> gather_text(const Comm& world, const std::string& mine) {
  const int n = world.size();
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(world.rank() == 0 ? n : 0));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, world.native());
  std::vector<int> offsets(lens.size(), 0);
  if (!lens.empty()) std::exclusive_scan(lens.begin(), lens.end(), offsets.begin(), 0);
  std::string all(world.rank() == 0 ? static_cast<std::size_t>(offsets.back() + lens.back()) : 0, '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, world.native());
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lens.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lens[r])));
  return out;
}

}  // namespace

std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   const Sysfs& sysfs, Nvml& nvml) {
  const json line = read_line(nodes, world.rank(), linked, sysfs, nvml);
  std::vector<json> lines;
  for (const auto& text : gather_text(world, line.dump(-1, ' ', false, json::error_handler_t::replace)))
    lines.push_back(json::parse(text));
  return lines;
}

std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked) {
  const auto nvml = load_nvml();
  return gather_inventory(world, nodes, linked, Sysfs("/"), *nvml);
}

}  // namespace fb::topo
