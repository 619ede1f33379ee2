// Two results files side by side (vendor A against B, before against after):
// per op, scope and size, the ratio of times and whether the rows differ
// beyond their own run-to-run spread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>


#include "fabricbench/core/record.hpp"

namespace fb::model {

enum class Difference {
  same,    // the [min, p99] ranges of the two rows overlap
  slower,  // b's fastest iteration is slower than a's p99
  faster,  // b's p99 is faster than a's fastest iteration
  no_spread,  // a row has one timed iteration (an imported nccl-tests row): no spread to judge against
  only_a,
  only_b,
};
std::string_view name(Difference d);

struct CompareRow {
  std::string op, scope, dtype;
  int nranks = 0;
  int groups = 1;
  bool in_place = false;
  std::uint64_t bytes = 0;
  Measurement a, b;   // empty where the row is only in the other file
  double ratio = 0;   // b median time / a median time
  Difference diff = Difference::same;
};

struct Comparison {
  std::vector<CompareRow> rows;  // in a's order, then rows only in b
  int slower = 0, faster = 0, only_a = 0, only_b = 0, no_spread = 0;
  // How the two runs were set up unlike each other beside the fabric (the MPI
  // library, the thread level it ran at), in words: every ratio carries it.
  std::vector<std::string> unlike;
};

Comparison compare_results(const Results& a, const Results& b);

}  // namespace fb::model
