// The slowest GPU of a `fabricbench gemm` run for each datatype, from every
// rank's gemm lines: what the command warns about and the summary records.
// Plain record lines, no CUDA: the CPU build and its tests see it.
#pragma once

#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

// One entry per datatype of `dtypes` (in that order) that has a line: the
// line furthest below the fastest rank at its own shape (m, n, k), the first
// of equals, and how far below that fastest it is. A datatype without lines
// is left out.
std::vector<GemmSlowest> slowest_per_dtype(const std::vector<GemmLine>& lines, const std::vector<Dtype>& dtypes);

}  // namespace fb
