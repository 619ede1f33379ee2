// Test and fault-injection only: an op whose output can be changed after an
// iteration, so that the check must see it (--inject corrupt, the engine's
// correctness tests). Each backend's op implements it beside PreparedOp; the
// engine's port (PreparedOp) does not carry it, so production code that
// drives ops has no way to call it.
#pragma once

#include <cstdint>

#include "fabricbench/backends/decorator.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb {

class CorruptibleOutput {
 public:
  virtual ~CorruptibleOutput() = default;
  // Change output element `index` (ignored beyond the output) to a value the check cannot accept.
  virtual void corrupt_output_element(std::uint64_t index) = 0;
};

// The op itself, or the first op under its decorators, that can be
// corrupted; null when none can.
inline CorruptibleOutput* corruptible(PreparedOp& op) {
  PreparedOp* at = &op;
  while (at) {
    if (auto* c = dynamic_cast<CorruptibleOutput*>(at)) return c;
    auto* wrapper = dynamic_cast<ForwardingOp*>(at);
    at = wrapper ? &wrapper->wrapped() : nullptr;
  }
  return nullptr;
}

}  // namespace fb
