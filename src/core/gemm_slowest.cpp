#include "fabricbench/core/gemm_slowest.hpp"

#include <algorithm>
#include <string>

namespace fb {

namespace {

bool same_shape(const GemmLine& a, const GemmLine& b) { return a.m == b.m && a.n == b.n && a.k == b.k; }

// The fastest rate any rank reached at this line's dtype and shape.
double fastest_like(const std::vector<GemmLine>& lines, const GemmLine& line) {
  double fastest = 0;
  for (const auto& l : lines)
    if (l.dtype == line.dtype && same_shape(l, line)) fastest = std::max(fastest, l.tflops);
  return fastest;
}

}  // namespace

std::vector<GemmSlowest> slowest_per_dtype(const std::vector<GemmLine>& lines, const std::vector<Dtype>& dtypes) {
  std::vector<GemmSlowest> out;
  for (Dtype d : dtypes) {
    // Ranks are compared at the same shape (a small product is slower on
    // every GPU): the slowest is the line furthest below its shape's fastest.
    const GemmLine* slow = nullptr;
    double slow_fastest = 0;
    for (const auto& l : lines) {
      if (l.dtype != name(d)) continue;
      const double fastest = fastest_like(lines, l);
      const bool slower = !slow || l.tflops * slow_fastest < slow->tflops * fastest;
      if (slower) slow = &l, slow_fastest = fastest;
    }
    if (!slow) continue;
    out.push_back({std::string(name(d)), slow->rank, slow->host, slow->device, slow->pci_bus_id, slow->tflops,
                   slow_fastest, slow_fastest > 0 ? 100.0 * (1.0 - slow->tflops / slow_fastest) : 0.0});
  }
  return out;
}

}  // namespace fb
