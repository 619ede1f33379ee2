#include "fabricbench/core/gemm_slowest.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace fb {

namespace {

using ShapeKey = std::tuple<std::string, int, int, int>;  // dtype, m, n, k
ShapeKey shape_of(const GemmLine& l) { return {l.dtype, l.m, l.n, l.k}; }

// The fastest rate any rank reached at each dtype and shape: one pass, so a
// run of many ranks and shapes is not compared line against line.
std::map<ShapeKey, double> fastest_per_shape(const std::vector<GemmLine>& lines) {
  std::map<ShapeKey, double> fastest;
  for (const auto& l : lines) {
    double& f = fastest[shape_of(l)];
    f = std::max(f, l.tflops);
  }
  return fastest;
}

}  // namespace

std::vector<GemmSlowest> slowest_per_dtype(const std::vector<GemmLine>& lines, const std::vector<Dtype>& dtypes) {
  std::vector<GemmSlowest> out;
  const auto fastest_at = fastest_per_shape(lines);
  for (Dtype d : dtypes) {
    // Ranks are compared at the same shape (a small product is slower on
    // every GPU): the slowest is the line furthest below its shape's fastest.
    const GemmLine* slow = nullptr;
    double slow_fastest = 0;
    for (const auto& l : lines) {
      if (l.dtype != name(d)) continue;
      const double fastest = fastest_at.at(shape_of(l));
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
