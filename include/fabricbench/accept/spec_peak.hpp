// The spec peak a scope's measurements are held to: what `spec` rules
// compare against and what `report html` draws as each curve's peak line, so
// the page and the verdict never disagree on it.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/record.hpp"

namespace fb::accept {

// Spec peak of a scope from inventory lines: the minimum known peak_gbps of
// the paths the scope's ranks use (a global collective across nodes: intra
// and inter), of the classes the rows' `path` labels name (NET/IB: IB or
// RoCE; NET/Socket or tcp: TCP; NVLink; PCIe; SHM; a label that names none,
// such as ucx, allows every class). The inter scope is local rank 0 of each
// node: over IB or RoCE from a rank with a GPU rail, its rail's NICs, not the
// node's sum (issue 34, defect 4). `reason` says why none is known.
struct SpecPeak {
  double gbps = 0;
  bool known = false;
  std::string basis;   // of the deciding path: "IB: 8 x 400 Gb/s NDR"
  std::string reason;  // when unknown
};
SpecPeak spec_peak(const Results& run, const std::string& scope, const std::vector<std::string>& row_paths);

}  // namespace fb::accept
