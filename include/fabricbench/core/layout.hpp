// How a requested size becomes element counts per op, and the bandwidth
// figures, by each op's row of the op table (op_desc.hpp). Conventions follow
// nccl-tests so figures compare one to one:
//   size = the per-rank buffer for all_reduce, broadcast, reduce, sendrecv and
//   the point-to-point ops; the whole gathered/scattered buffer for all_gather,
//   reduce_scatter, alltoall, gather and scatter. A size that does not divide
//   evenly is rounded down, and `bytes` says what actually moved.
#pragma once

#include <cstdint>

#include "fabricbench/core/types.hpp"

namespace fb {

struct Layout {
  std::uint64_t bytes = 0;      // the size the row reports, after rounding
  std::uint64_t count = 0;      // elements in that size (nccl-tests' "count" column)
  std::uint64_t in_elems = 0;   // elements in each rank's input buffer
  std::uint64_t out_elems = 0;  // elements in each rank's output buffer
  std::uint64_t block = 0;      // elements per rank-block (all_gather, reduce_scatter, alltoall, gather, scatter)
};

Layout layout_for(Op op, Dtype dtype, std::uint64_t requested_bytes, int nranks);

// algbw in GB/s (1e9 bytes per second): bytes / time. bidir counts both
// directions, as osu_bibw does.
double algbw_gbps(Op op, std::uint64_t bytes, double time_us);

// nccl-tests' bus-bandwidth factors: all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, alltoall, gather, scatter (n-1)/n; broadcast, reduce,
// sendrecv and the point-to-point ops 1.
double busbw_factor(Op op, int nranks);

}  // namespace fb
