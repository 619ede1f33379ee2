// Is a latency/bandwidth curve smooth? In a sweep over sizes, a size whose
// time jumps above the line through its two neighbours (on log-log axes, so
// a curve growing with size is no jump), or where busbw falls from the size
// before, is where a protocol switches, a rail is bad or a link flaps. The
// `smoothness` rule of `check` and the warning at the end of `run` both ask
// this; each break names the size, its neighbours' figures, the threshold and
// the ranks that took part (with their hosts) and the slowest of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/cliff.hpp"
#include "fabricbench/core/record_lines.hpp"

namespace fb::accept {

struct SmoothnessLimits {
  double max_jump = 0;  // time over its neighbours' trend above this factor is a jump; 0 = not checked
  double max_drop = 0;  // busbw falling by more than this fraction from the size before is a drop; 0 = not checked
  std::uint64_t from_bytes = 0;  // sizes below are not judged (latency noise)
};

enum class BreakKind { jump, drop };

struct CurveBreak {
  BreakKind kind = BreakKind::jump;
  const Measurement* row = nullptr;     // the size flagged
  const Measurement* before = nullptr;  // the size below it
  const Measurement* after = nullptr;   // the size above it (jumps)
  double factor = 0;    // jump: time / trend; drop: the fraction busbw fell
  double trend_us = 0;  // jump: the time the neighbours' line gives at this size
  std::vector<int> ranks;  // world ranks that took part, when the row tells
  std::string detail;      // the break in one sentence
};

// Rows are grouped into curves (op, backend, scope, path, dtype, placement,
// peers, rank counts, pass) and each curve is read in size order. `header`
// names the ranks' hosts.
std::vector<CurveBreak> find_curve_breaks(const std::vector<const Measurement*>& rows, const SmoothnessLimits& limits,
                                          const RunHeader& header);

// A cliff in one curve (core/cliff.hpp): what `run` warns about without
// being asked.
struct CurveCliff {
  const Measurement* before = nullptr;  // the last size before the edge
  const Measurement* at = nullptr;      // the first size past it
  const Measurement* last = nullptr;    // the curve's largest size
  Cliff cliff;                          // on busbw
  std::vector<int> ranks;               // world ranks that took part, when the row tells
  std::string curve;                    // "all_reduce/global mpi out-of-place"
  std::string where;                    // "at 32 MiB: busbw falls 15x, from 6.69 GB/s at 16 MiB to 0.44 GB/s ..."
  std::string ranks_text;               // "ranks 0 (vm), 1 (vm)"
};

// What a cliff is, in the words `run`'s warning and `report html` both use.
inline constexpr std::string_view kCliffMeaning =
    "the library switching algorithm or a link failing at large sizes, not noise";

// The first cliff of every curve that has one, curves grouped as above.
std::vector<CurveCliff> find_cliffs(const std::vector<const Measurement*>& rows, const RunHeader& header);

// Curves among `rows` with at least `sizes` sizes (a jump needs 3, a drop 2).
std::size_t curves_with_sizes(const std::vector<const Measurement*>& rows, std::size_t sizes);

}  // namespace fb::accept
