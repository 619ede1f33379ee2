#include "fabricbench/core/gemm_slowest.hpp"

#include <algorithm>
#include <string>

namespace fb {

std::vector<GemmSlowest> slowest_per_dtype(const std::vector<GemmLine>& lines, const std::vector<Dtype>& dtypes) {
  std::vector<GemmSlowest> out;
  for (Dtype d : dtypes) {
    const GemmLine* slow = nullptr;
    double fastest = 0;
    for (const auto& l : lines) {
      if (l.dtype != name(d)) continue;
      fastest = std::max(fastest, l.tflops);
      if (!slow || l.tflops < slow->tflops) slow = &l;
    }
    if (!slow) continue;
    out.push_back({std::string(name(d)), slow->rank, slow->host, slow->device, slow->pci_bus_id, slow->tflops, fastest,
                   fastest > 0 ? 100.0 * (1.0 - slow->tflops / fastest) : 0.0});
  }
  return out;
}

}  // namespace fb
