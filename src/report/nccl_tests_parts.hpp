// What the text and JSON readers of nccl-tests' output share: one row as
// nccl-tests printed it, and how it becomes fabricbench's measurement lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabricbench/report/nccl_tests.hpp"

namespace fb::report::detail {

// One placement of a row (out-of-place or in-place) as printed.
struct Printed {
  bool present = false;
  double time_us = 0;
  std::optional<double> algbw_gbps;  // nullopt: not printed ("N/A")
  std::optional<double> busbw_gbps;
  std::optional<std::int64_t> wrong;  // nullopt: not checked ("N/A", null, an old "error" column)
};

struct PrintedRow {
  std::string where;  // "FILE:LINE" or "FILE: results[3]"
  std::uint64_t size = 0;
  std::uint64_t count = 0;
  std::string type;
  std::string redop;
  int root = -1;
  Printed out_of_place, in_place;
};

// fabricbench's op for an nccl-tests binary or test name ("all_reduce_perf",
// "all_reduce"); "" when it names none of ours. Throws naming `where` for
// nccl-tests' tests fabricbench has no op for (hypercube).
[[nodiscard]] std::string op_of_binary(const std::string& binary, const std::string& where);

// The binary named in a line or a file name ("./build/all_gather_perf -b 8"): "" when none.
[[nodiscard]] std::string binary_in(const std::string& text);

// Appends the row's placements to `table.rows` as measurements: algbw from
// size / time (exactly as nccl-tests computes it, without its print
// rounding), busbw by the op's factor for the table's rank count. Throws
// fb::UsageError naming `row.where` when the printed algbw or busbw does not
// follow from them (a rank count or a column misread).
void add_row(NcclTestsTable& table, const PrintedRow& row);

// Rank count when a log lists no ranks: --ranks, else from the busbw/algbw
// ratio of the op's factor (all_reduce, all_gather, ...), else 0.
int ranks_from_factor(const std::string& op, double algbw, double busbw);

}  // namespace fb::report::detail
