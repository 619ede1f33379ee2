// What rank 0 makes of every rank's inventory line: the heterogeneity across
// nodes, the readable report, and the gathering itself. Works on the record's
// JSON lines, so a record file can be reported on the same way.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/nvml.hpp"
#include "fabricbench/topo/sysfs.hpp"

namespace fb::topo {

using json = nlohmann::ordered_json;

// One attribute (GPU model, driver, NIC rates, ...) that is not the same on
// every rank: each value with the hosts (and ranks) that have it.
struct Difference {
  std::string attribute;
  struct Holders {
    std::string value;
    std::vector<std::string> hosts;
    std::vector<int> ranks;
  };
  std::vector<Holders> values;
};

// The per-rank values compared: gpus, gpu_memory, nvlink, driver,
// cuda_driver, cuda_runtime, nccl, nic_rates, mtus, firmware.
std::vector<std::pair<std::string, std::string>> fingerprint(const json& inventory);
std::vector<Difference> find_differences(const std::vector<json>& inventories);
json to_json(const std::vector<Difference>& differences);

// A multi-node NVLink domain (GB200/GB300 NVL72) the job's GPUs are in:
// "<cluster uuid>/<clique>", its GPUs (each host's counted once) and hosts.
// Only GPUs whose fabric registration completed count.
struct NvlinkDomain {
  std::string id;
  int gpus = 0;
  std::vector<std::string> hosts;
};
std::vector<NvlinkDomain> nvlink_domains(const std::vector<json>& inventories);
// The domain of the GPU a line's rank drives (`rank_gpu`): "" without one,
// or where that GPU has not joined a domain (the scope `domain` groups ranks by it).
std::string rank_nvlink_domain(const json& inventory);
// The report's section on them ("" when no GPU is in one).
std::string format_domains(const std::vector<NvlinkDomain>& domains);

// The readable report: one block per node (its first rank's inventory, and
// the GPU each rank drives), then the differences.
std::string format_report(const std::vector<json>& inventories, const std::vector<Difference>& differences);

// Collective over `world`: every rank reads its own inventory; rank 0 gets
// all lines in rank order, other ranks an empty vector. A reader that throws
// unexpectedly gives a line with "error" rather than stopping the job.
// `linked`: the CUDA and NCCL versions this process loaded (the GPU plugins
// know them: fb::loaded_library_versions()).
// `device_option`: the command's --device (-1: none), which picks each rank's GPU.
std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   const Sysfs& sysfs, Nvml& nvml, int device_option = -1);
// The same on this machine: sysfs at "/", NVML loaded at run time.
std::vector<json> gather_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   int device_option = -1);

// What a measuring command records of the inventory: this machine's
// gather_inventory as the record's typed lines, and how the ranks differ
// (both empty on ranks other than 0).
struct RecordedInventory {
  std::vector<InventoryLine> lines;
  std::vector<Difference> differences;
  // Every world rank's rank_nvlink_domain, on every rank (the domain scope's groups).
  std::vector<std::string> rank_domains;
};
RecordedInventory record_inventory(const Comm& world, const NodeMap& nodes, const LinkedVersions& linked,
                                   int device_option);

}  // namespace fb::topo
