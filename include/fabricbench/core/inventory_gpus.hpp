// The GPUs an inventory line says its rank runs on, for the readers that
// need them by model (check's mixed_gpus rule, model step --gpus-from), and
// the RDMA NICs it shows up (check's transport rule).
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"

namespace fb {

struct InventoryGpu {
  int index = -1;     // the node's GPU index (topo's gpus[].index, else its place in the list)
  std::string model;  // as NVML names it ("NVIDIA H200"); empty when the line names none
};

// The rank's own GPU when topo picked one (rank_gpu), else every GPU of its
// node; empty for a line without GPUs (no GPU, or NVML absent).
std::vector<InventoryGpu> rank_gpus(const InventoryLine& line);

// "mlx5_0 (IB)" for each NIC of kind IB or RoCE the line shows up (topo's
// nics[]); none for a line of another shape.
std::vector<std::string> rdma_nics_up(const InventoryLine& line);

}  // namespace fb
