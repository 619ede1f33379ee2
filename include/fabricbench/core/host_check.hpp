// Filling inputs and verifying outputs in host memory, for every op, against
// the exact expected value of each output element (see pattern.hpp). Device
// backends do the same on the GPU with the same expected values (check_values.hpp).
#pragma once

#include <cstdint>

#include "fabricbench/core/check_values.hpp"

namespace fb {

struct CheckResult {
  std::uint64_t wrong = 0;
  std::uint64_t first_wrong_index = 0;  // valid when wrong > 0
};

// Can the host check handle this datatype? (half, bfloat16 and fp8 have no host arithmetic here.)
bool host_checkable(Dtype dtype);

// Poison `out` (layout.out_elems elements) and then write this rank's input
// pattern into `in` (layout.in_elems elements; nothing where the op ignores
// this rank's input, see check::has_input). In-place callers pass the
// aliasing pointers; poisoning comes first so the input survives.
void fill_for_check(const CheckContext& ctx, void* in, void* out);

// Count the output elements of this rank that differ from their expected value.
// Ranks with no defined output (reduce and gather off the root, a
// point-to-point sender) return 0 wrong.
CheckResult verify_output(const CheckContext& ctx, const void* out);

// Does this rank have an output the check can verify?
bool has_checked_output(const CheckContext& ctx);

}  // namespace fb
