// Where a rank runs, as decisions on plain values (no CUDA), so every layout
// is tested on any machine: which device a rank takes, when two ranks share
// one GPU, and the lowest compute capability of the job. placement.cpp asks
// CUDA for the values and exchanges them over MPI.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb::gpu {

struct DeviceChoice {
  int device = -1;
  std::string error;  // "" when `device` is usable
};

// The device a rank takes among the `device_count` it sees: --device when
// given; otherwise its index on the node, wrapped to what it sees. All GPUs
// visible to every rank (one per local rank), one visible per rank (Slurm
// --gpus-per-task=1, --gpu-bind=single:1, a wrapper setting
// CUDA_VISIBLE_DEVICES per rank) and any block of k per rank all place every
// rank on its own GPU; two ranks on one physical GPU are caught afterwards by
// PCI bus id (shared_gpu_error), whatever the visible indices.
DeviceChoice choose_device(int device_option, int local_rank, int device_count, const std::string& host);

// A rank of one node and the PCI bus id of the GPU it took ("" when it has none).
struct PlacedRank {
  int world_rank = -1;
  std::string bus_id;
};

// Why rank `node[me]` may not run where it is: an earlier rank of its node
// took the same physical GPU. "" when none did.
[[nodiscard]] std::string shared_gpu_error(const std::vector<PlacedRank>& node, std::size_t me, int device,
                                           int device_count, const std::string& host);

// Where a rank of a copy group runs: its host, its GPU's PCI bus id, and the
// CUDA index that GPU has in its own process (its own CUDA_VISIBLE_DEVICES).
struct RankGpu {
  std::string host;
  std::string bus_id;
  int device = -1;
};

// Why rank `a` cannot copy to rank `b`'s GPU, "" when it can: peers are one
// node's two different GPUs, told apart by PCI bus id. Device indices are
// each process's own numbering: under one GPU per rank both ranks say 0, and
// with different visible orders one index names different GPUs (issue 34,
// defect 2).
std::string peer_copy_refusal(const RankGpu& a, const RankGpu& b, int rank_a, int rank_b, std::string_view op);

// A rank's compute capability as one text for an allgather, and the lowest of the job's.
using Capability = GpuCapability;
std::string encode(const Capability& c);
// The lowest over every rank with a GPU (major 0 when none has one).
Capability lowest_capability(const std::vector<std::string>& encoded);

// NCCL reduces fp8 only on compute capability 9.0 and later: decided on the
// job's lowest GPU, so every rank reaches the same answer and no collective
// runs on some ranks while others skip it.
Support fp8_reduction_support(const Capability& lowest);

}  // namespace fb::gpu
