#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fabricbench/core/clock.hpp"
#include "fabricbench/step/compute.hpp"

namespace fb::step {
namespace {

// Eight independent multiply-add chains: enough to keep a core's FMA units
// busy, small enough to stay in registers. `volatile` keeps the result alive.
double spin(std::uint64_t rounds) {
  double a[8] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7};
  for (std::uint64_t r = 0; r < rounds; ++r)
    for (double& x : a) x = x * 0.9999999 + 1e-7;
  volatile double sink = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
  return sink;
}

class HostKernel final : public ComputeKernel {
 public:
  explicit HostKernel(double slice_us) : slice_us_(slice_us) {
    // Rate: the fastest of many short timed runs (the least disturbed: on a
    // shared machine a few of them run with the core to themselves), after a
    // warm-up.
    spin(1 << 16);
    double best = 1e300;
    constexpr std::uint64_t kRounds = 1 << 18;  // about 5 ms
    for (int i = 0; i < 16; ++i) {
      const double t = now_us();
      spin(kRounds);
      best = std::min(best, now_us() - t);
    }
    rounds_per_us_ = static_cast<double>(kRounds) / best;
  }

  void compute(double us, const std::function<void()>& poll) override {
    auto left = static_cast<std::uint64_t>(std::llround(us * rounds_per_us_));
    const auto slice = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(slice_us_ * rounds_per_us_));
    while (left > 0) {
      const std::uint64_t n = std::min(left, slice);
      spin(n);
      left -= n;
      poll();
    }
  }

  std::string describe() const override {
    return fmt::format("host FMA kernel, {:.0f} rounds/us, polled every {:.0f} us", rounds_per_us_, slice_us_);
  }

 private:
  double slice_us_;
  double rounds_per_us_ = 1;
};

}  // namespace

std::unique_ptr<ComputeKernel> make_host_kernel(double slice_us) { return std::make_unique<HostKernel>(slice_us); }

}  // namespace fb::step
