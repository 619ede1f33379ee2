#include "fabricbench/backends/backend.hpp"

#include <time.h>

namespace fb {

double now_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

void PreparedOp::run_timed(IterationTimes times) {
  // One clock read per iteration: back-to-back iterations start where the
  // previous one ended, so the harness adds a single vDSO call to each.
  double t = now_us();
  for (std::size_t i = 0; i < times.start_us.size(); ++i) {
    times.start_us[i] = t;
    count_issued(times.issued);
    run();
    const double end = now_us();
    times.duration_us[i] = end - t;
    t = end;
  }
}

}  // namespace fb
