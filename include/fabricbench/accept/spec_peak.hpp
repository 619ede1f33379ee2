// The spec peak a scope's measurements are held to: what `spec` rules
// compare against and what `report html` draws as each curve's peak line, so
// the page and the verdict never disagree on it.
#pragma once

#include <string>

#include "fabricbench/core/record.hpp"

namespace fb::accept {

// Spec peak of a scope from inventory lines: the minimum known peak_gbps of
// paths with that scope (a global collective across nodes: of intra and
// inter). `reason` says why none is known.
struct SpecPeak {
  double gbps = 0;
  bool known = false;
  std::string basis;   // of the deciding path: "IB: 8 x 400 Gb/s NDR"
  std::string reason;  // when unknown
};
SpecPeak spec_peak(const Results& run, const std::string& scope);

}  // namespace fb::accept
