// The step executor on the host backend with every rank of the job: a
// data-parallel step whose communication is known.
#include <gtest/gtest.h>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/step/executor.hpp"
#include "mpi_host/mpi_host.hpp"

namespace fb::step {
namespace {

StepSchedule dp_step(int ranks, double compute_us, std::uint64_t bucket_bytes, int buckets, double window) {
  StepSchedule s;
  s.dp = ranks;
  s.compute_us = compute_us;
  s.comms.push_back({"DP gradient all-reduce", Op::all_reduce, Group::dp, bucket_bytes, buckets, window});
  return s;
}

StepReport run(const StepSchedule& s, int steps = 5) {
  auto backend = make_mpi_host_backend();
  auto kernel = make_host_kernel();
  Executor ex(Comm::world(), *backend, *kernel, s, Dtype::float32);
  return ex.run(steps, 1);
}

TEST(StepExecutor, OverlappedStepLiesBetweenTheBounds) {
  const StepReport r = run(dp_step(Comm::world().size(), 20000, 1 << 20, 8, 0.8));
  const double c = r.compute_us(), k = r.comm_us(), s = r.step_us(), z = r.serial_us();
  ASSERT_GT(c, 0);
  ASSERT_GT(k, 0);
  // Never faster than the longer of the two, never slower than both in a row
  // (10% slack for a shared, loaded machine).
  EXPECT_GE(s, 0.9 * std::max(c, k)) << "compute " << c << " comm " << k;
  EXPECT_LE(s, 1.1 * (c + k)) << "compute " << c << " comm " << k;
  EXPECT_GE(r.comm_share(), 0.0);
  EXPECT_LE(r.exposed_share(), r.comm_share() + 0.1);
  // No overlap: the step is the compute plus the communication.
  EXPECT_NEAR(z, c + k, 0.25 * (c + k));
  // Switching overlap off adds back what the overlap hid.
  EXPECT_NEAR(r.hidden_us(), (c + k) - s, 0.25 * (c + k));
  ASSERT_EQ(r.comms.size(), 1u);
  EXPECT_NEAR(r.comms[0].per_step_us, k, 0.35 * k);
}

TEST(StepExecutor, BlockingCallsAreFullyExposed) {
  const StepReport r = run(dp_step(Comm::world().size(), 10000, 256 << 10, 4, 0.0));
  const double c = r.compute_us(), k = r.comm_us();
  // Window 0: overlapped and serial are the same schedule.
  EXPECT_NEAR(r.step_us(), c + k, 0.25 * (c + k));
  EXPECT_NEAR(r.step_us(), r.serial_us(), 0.25 * (c + k));
}

TEST(StepExecutor, ComputeOnlyMatchesTheCalibratedRate) {
  StepSchedule s = dp_step(Comm::world().size(), 30000, 1024, 1, 0.5);
  const StepReport r = run(s);
  // The kernel's rate was calibrated on this rank: a lightly loaded run lands
  // near the asked duration; a shared machine can only make it slower.
  EXPECT_GT(r.compute_us(), 0.8 * s.compute_us);
  EXPECT_LT(r.compute_us(), 3.0 * s.compute_us);
}

TEST(StepExecutor, DegreesMustCoverTheRanks) {
  StepSchedule s = dp_step(Comm::world().size() + 1, 1000, 1024, 1, 0);
  auto backend = make_mpi_host_backend();
  auto kernel = make_host_kernel();
  EXPECT_THROW(Executor(Comm::world(), *backend, *kernel, s, Dtype::float32), UsageError);
}

}  // namespace
}  // namespace fb::step
