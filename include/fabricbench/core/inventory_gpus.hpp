// The GPUs an inventory line says its rank runs on, for the readers that
// need them by model (check's mixed_gpus rule, model step --gpus-from) or by
// who else uses them (check's shared_gpus rule), and the RDMA NICs it shows
// up (check's transport rule).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"

namespace fb {

// A process on the GPU that is not one of the job's ranks (topo's
// gpus[].processes with ours false).
struct InventoryGpuUser {
  std::int64_t pid = 0;
  std::string name;                                // empty when the node's /proc has no such pid
  std::optional<std::uint64_t> used_memory_bytes;  // absent when NVML could not say
};

// "pid 4242 (python3, 30.0 GiB)": how topo's flag and check's shared_gpus
// rule name a process on a GPU (`name` empty: not in the node's /proc).
std::string gpu_user_text(std::int64_t pid, const std::string& name, std::optional<std::uint64_t> used_memory_bytes);

struct InventoryGpu {
  int index = -1;     // the node's GPU index (topo's gpus[].index, else its place in the list)
  std::string model;  // as NVML names it ("NVIDIA H200"); empty when the line names none
  // Who else may use it; absent/empty where the line does not say (NVML
  // absent or older, a record before 1.8).
  std::string compute_mode;  // "default", "exclusive_process", "prohibited", ...
  std::optional<bool> mig;
  std::optional<std::vector<InventoryGpuUser>> others;  // known when NVML listed the GPU's processes
};

// The rank's own GPU when topo picked one (rank_gpu), else every GPU of its
// node; empty for a line without GPUs (no GPU, or NVML absent).
std::vector<InventoryGpu> rank_gpus(const InventoryLine& line);

// "mlx5_0 (IB)" for each NIC of kind IB, RoCE or EFA the line shows up (topo's
// nics[]); none for a line of another shape.
std::vector<std::string> rdma_nics_up(const InventoryLine& line);

}  // namespace fb
