// The step executor on the host backend with every rank of the job: a
// data-parallel step whose communication is known.
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/backends/decorator.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/progress.hpp"
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

StepReport run(const StepSchedule& s, int steps = 7) {
  auto backend = make_mpi_host_backend();
  auto kernel = make_host_kernel();
  Executor ex(Comm::world(), *backend, *kernel, s, Dtype::float32);
  return ex.run(steps, 1);
}

// The fastest step of each mode: a shared machine only ever adds time (a
// descheduled rank, a busy core), so the minimum is the figure that keeps the
// relations between the modes; the medians are reported, not asserted.
struct Fastest {
  double compute, comm, overlapped, serial;
  explicit Fastest(const StepReport& r)
      : compute(r.times(Mode::compute_only).step.min_us),
        comm(r.times(Mode::comm_only).step.min_us),
        overlapped(r.times(Mode::overlapped).step.min_us),
        serial(r.times(Mode::serial).step.min_us) {}
};

TEST(StepTiming, OverlappedStepLiesBetweenTheBounds) {
  // 8 x 4 MiB all-reduces, issued through the last 80% of 40 ms of compute.
  const StepReport r = run(dp_step(Comm::world().size(), 40000, 4 << 20, 8, 0.8));
  const Fastest f(r);
  ASSERT_GT(f.compute, 0);
  ASSERT_GT(f.comm, 0);
  const std::string seen = "compute " + std::to_string(f.compute) + " comm " + std::to_string(f.comm) +
                           " overlapped " + std::to_string(f.overlapped) + " serial " + std::to_string(f.serial);
  // Never faster than the longer of the two (10% slack for timer and rate
  // drift); and never slower than the two in a row.
  EXPECT_GE(f.overlapped, 0.8 * std::max(f.compute, f.comm)) << seen;
  EXPECT_LE(f.overlapped, 1.5 * (f.compute + f.comm)) << seen;
  // Without overlap the step is the compute and then the communication.
  EXPECT_GE(f.serial, 0.8 * (f.compute + f.comm)) << seen;
  // How much the overlap hides is not asserted here: on the host backend a
  // shared-memory copy needs the same cores as the compute. The emulated-node
  // test (tests/cluster), where the kernel's TCP stack moves the bytes, shows it.
  // Both parts were measured: the share lies strictly between them.
  EXPECT_GT(r.comm_share(), 0.0);
  EXPECT_LT(r.comm_share(), 1.0);
  ASSERT_EQ(r.comms.size(), 1u);
  EXPECT_EQ(r.comms[0].name, "DP gradient all-reduce");
  EXPECT_GT(r.comms[0].per_call_us, 0);
  EXPECT_NEAR(r.comms[0].per_step_us, 8 * r.comms[0].per_call_us, 1e-6);
}

TEST(StepTiming, BlockingCallsAreFullyExposed) {
  const StepReport r = run(dp_step(Comm::world().size(), 20000, 256 << 10, 4, 0.0));
  const Fastest f(r);
  const std::string seen = "compute " + std::to_string(f.compute) + " comm " + std::to_string(f.comm) +
                           " overlapped " + std::to_string(f.overlapped) + " serial " + std::to_string(f.serial);
  // Window 0: every call blocks the compute, so overlapped and serial are
  // one schedule, and neither hides any communication.
  EXPECT_GE(f.overlapped, 0.8 * (f.compute + f.comm)) << seen;
  EXPECT_NEAR(f.overlapped, f.serial, 0.3 * f.serial) << seen;
}

TEST(StepTiming, ComputeOnlyTakesAtLeastTheAskedTime) {
  StepSchedule s = dp_step(Comm::world().size(), 30000, 1024, 1, 0.5);
  const StepReport r = run(s);
  // The kernel does the work of the asked time at its calibrated rate: a
  // shared machine only adds to the wall time (at a load average of 23 the
  // fastest of these steps took 36x the asked time), so in wall time only the
  // lower bound holds (it catches a kernel or an executor doing a fraction
  // of the work). A multiple of the work is caught in CPU time (HostKernel)
  // and in what the executor asks for
  // (StepExecutor.EveryModeAsksTheKernelForTheWholeCompute).
  EXPECT_GT(r.times(Mode::compute_only).step.min_us, 0.7 * s.compute_us);
}

// This thread's CPU time: the work done, whatever the machine's load.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

TEST(HostKernel, ComputeTakesTheAskedTimeInCpuTime) {
  // In CPU time the compute is what the core spent on this thread, not the
  // turns of the other processes, so the work done at the calibrated rate
  // compares with the asked time however loaded the machine is (mpi.step.np4
  // runs it on oversubscribed cores; it held at a load average of 23). The
  // calibration itself is the fastest of 16 short runs, which at that load
  // still finds one run with the core to itself. The fewest of a few
  // trials: an interrupt or a cold cache only ever adds.
  auto kernel = make_host_kernel();
  static const std::function<void()> idle = [] {};
  constexpr double kAskedUs = 30000;
  double fewest = 1e300;
  for (int i = 0; i < 5; ++i) {
    const double t = thread_cpu_us();
    kernel->compute(kAskedUs, idle);
    fewest = std::min(fewest, thread_cpu_us() - t);
  }
  EXPECT_GT(fewest, 0.7 * kAskedUs) << kernel->describe();
  EXPECT_LT(fewest, 1.5 * kAskedUs) << kernel->describe();
}

// Counts the compute each step asks for (a step ends at the executor's
// sync()), without doing any: what the executor asks of its kernel.
class CountingKernel final : public ComputeKernel {
 public:
  void compute(double us, const std::function<void()>& poll) override { work(us, 0, poll); }
  void work(double products_us, double memory_us, const std::function<void()>& poll) override {
    asked_us_ += products_us + memory_us;
    memory_us_ += memory_us;
    last_asked_us_ = products_us + memory_us;
    poll();
  }
  void sync() override {
    per_step_us.push_back(asked_us_);
    per_step_memory_us.push_back(memory_us_);
    last_per_step_us.push_back(last_asked_us_);
    asked_us_ = memory_us_ = last_asked_us_ = 0;
  }
  std::string describe() const override { return "counting"; }
  std::vector<double> per_step_us;
  std::vector<double> per_step_memory_us;  // of it, asked for as memory-bound work
  std::vector<double> last_per_step_us;    // what the step's last compute asked for

 private:
  double asked_us_ = 0;
  double memory_us_ = 0;
  double last_asked_us_ = 0;
};

TEST(StepExecutor, EveryModeAsksTheKernelForTheWholeCompute) {
  // Buckets issued through half of the compute, and a blocking call: the
  // compute is cut in pieces, which must add up to the step's compute once,
  // in every mode but comm_only, which asks for none.
  StepSchedule s = dp_step(Comm::world().size(), 30000, 1024, 3, 0.5);
  s.comms.push_back({"blocking all-reduce", Op::all_reduce, Group::dp, 1024, 2, 0.0});
  auto backend = make_mpi_host_backend();
  CountingKernel kernel;
  Executor ex(Comm::world(), *backend, kernel, s, Dtype::float32);
  constexpr int kSteps = 2, kWarmup = 1;
  ex.run(kSteps, kWarmup);
  // The modes take turns in the order of Mode, one step each per round.
  const double expected[] = {s.compute_us, 0, s.compute_us, s.compute_us};
  ASSERT_EQ(kernel.per_step_us.size(), 4u * (kSteps + kWarmup));
  for (std::size_t i = 0; i < kernel.per_step_us.size(); ++i)
    EXPECT_NEAR(kernel.per_step_us[i], expected[i % 4], 1e-6) << "step " << i << ", " << name(static_cast<Mode>(i % 4));
}

TEST(StepExecutor, NonGemmWorkIsAskedForBesideTheProductsAndTheOptimizerLast) {
  // The layers' non-GEMM work runs inside the stretches, the optimizer once
  // the step's collectives are done (after the pipeline drains, in the
  // model): each mode that computes asks for all of it, the optimizer last.
  StepSchedule s = dp_step(Comm::world().size(), 30000, 1024, 3, 0.5);
  s.comms.push_back({"blocking all-reduce", Op::all_reduce, Group::dp, 1024, 2, 0.0});
  s.non_gemm_us = 12000;
  s.optimizer_us = 5000;
  auto backend = make_mpi_host_backend();
  CountingKernel kernel;
  Executor ex(Comm::world(), *backend, kernel, s, Dtype::float32);
  constexpr int kSteps = 2, kWarmup = 1;
  ex.run(kSteps, kWarmup);
  const double all = s.compute_us + s.non_gemm_us;
  const double expected[] = {all, 0, all, all};
  const double memory[] = {s.non_gemm_us, 0, s.non_gemm_us, s.non_gemm_us};  // the non-GEMM work as such
  const double last[] = {s.optimizer_us, 0, s.optimizer_us, s.optimizer_us};
  ASSERT_EQ(kernel.per_step_us.size(), 4u * (kSteps + kWarmup));
  for (std::size_t i = 0; i < kernel.per_step_us.size(); ++i) {
    EXPECT_NEAR(kernel.per_step_us[i], expected[i % 4], 1e-6) << "step " << i << ", " << name(static_cast<Mode>(i % 4));
    EXPECT_NEAR(kernel.per_step_memory_us[i], memory[i % 4], 1e-6)
        << "step " << i << ", " << name(static_cast<Mode>(i % 4));
    EXPECT_NEAR(kernel.last_per_step_us[i], last[i % 4], 1e-6)
        << "step " << i << ", " << name(static_cast<Mode>(i % 4));
  }
}

// One log of what the step did, in order: the kernel's compute calls and the
// collectives' starts and completions, each line tagged; sync() ends a step.
struct StepLog {
  std::vector<std::string> lines;
};

class LoggedOp final : public ForwardingOp {
 public:
  LoggedOp(std::unique_ptr<PreparedOp> inner, StepLog& log) : ForwardingOp(std::move(inner)), log_(log) {}
  void start() override {
    log_.lines.push_back("start");
    pending_ = true;
    inner().start();
  }
  bool finished() override {
    const bool done = inner().finished();
    if (done && pending_) log_.lines.push_back("done");
    pending_ = pending_ && !done;
    return done;
  }

 private:
  StepLog& log_;
  bool pending_ = false;
};

// Groups whose ops are OpT decorators sharing `Ctx` (the test's log or
// probe), and the backend that opens them: the step's calls observed
// without changing what they do.
template <class OpT, class Ctx>
class ObservedGroup : public ForwardingGroup {
 public:
  ObservedGroup(std::unique_ptr<BackendGroup> inner, Ctx& ctx) : ForwardingGroup(std::move(inner)), ctx_(ctx) {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    return std::make_unique<OpT>(ForwardingGroup::prepare(spec), ctx_);
  }

 protected:
  Ctx& ctx_;
};

template <class GroupT, class Ctx>
class ObservedBackend final : public ForwardingBackend {
 public:
  ObservedBackend(std::unique_ptr<Backend> inner, Ctx& ctx) : ForwardingBackend(std::move(inner)), ctx_(ctx) {}
  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    return std::make_unique<GroupT>(ForwardingBackend::open(comm), ctx_);
  }

 private:
  Ctx& ctx_;
};

using LoggedBackend = ObservedBackend<ObservedGroup<LoggedOp, StepLog>, StepLog>;

class LoggedKernel final : public ComputeKernel {
 public:
  explicit LoggedKernel(StepLog& log) : log_(log) {}
  void compute(double us, const std::function<void()>& poll) override {
    log_.lines.push_back("compute " + std::to_string(us));
    poll();
  }
  void sync() override { log_.lines.push_back("sync"); }
  std::string describe() const override { return "logged"; }

 private:
  StepLog& log_;
};

TEST(StepExecutor, TheOptimizerRunsOnceEveryCollectiveOfTheStepHasCompleted) {
  // Three gradient buckets queued in the last half of the compute (the last
  // at its very end, still in flight when the layers' work is done) and a
  // blocking call: in each step that runs the optimizer, every call started
  // has completed before the optimizer's compute, which is the step's last.
  StepSchedule s = dp_step(Comm::world().size(), 30000, 1024, 3, 0.5);
  s.comms.push_back({"blocking all-reduce", Op::all_reduce, Group::dp, 1024, 2, 0.0});
  s.non_gemm_us = 12000;
  s.optimizer_us = 4321;
  StepLog log;
  LoggedBackend backend(make_mpi_host_backend(), log);
  LoggedKernel kernel(log);
  Executor ex(Comm::world(), backend, kernel, s, Dtype::float32);
  ex.run(2, 1);
  const std::string optimizer = "compute " + std::to_string(s.optimizer_us);
  std::size_t steps_with_optimizer = 0, started = 0, done = 0, calls_before = 0;
  std::string last_compute;
  for (const std::string& line : log.lines) {
    if (line == "start") ++started;
    if (line == "done") ++done;
    if (line.rfind("compute ", 0) == 0) last_compute = line;
    if (line == optimizer) {
      ++steps_with_optimizer;
      EXPECT_EQ(done, started) << "step " << steps_with_optimizer << ": " << started - done
                               << " collectives still in flight when the optimizer ran";
      calls_before += started;
    }
    if (line != "sync") continue;
    if (last_compute == optimizer) {
      EXPECT_EQ(done, started);
    }
    started = done = 0;
    last_compute.clear();
  }
  // Every mode but comm_only runs the optimizer, warm-up step included: 3
  // modes x 3 steps. Serial and overlapped issue their 5 calls (3 buckets,
  // 2 blocking) before it; compute_only none.
  EXPECT_EQ(steps_with_optimizer, 9u);
  EXPECT_EQ(calls_before, 6u * 5u);
}

TEST(StepTiming, NonGemmWorkLengthensTheStepAndIsMeasuredApart) {
  // 5 ms of products, 30 ms of non-GEMM work of which 10 ms optimizer, two
  // small buckets: the step with the work takes longer than the same step
  // without it by most of the work's time. Fastest steps (a shared machine
  // only adds time) and a margin of half the work: the step without the
  // work would have to be slowed by 15 ms in all seven of its steps.
  const int ranks = Comm::world().size();
  StepSchedule with = dp_step(ranks, 5000, 64 << 10, 2, 0.5);
  with.non_gemm_us = 30000;
  with.optimizer_us = 10000;
  const StepSchedule without = dp_step(ranks, 5000, 64 << 10, 2, 0.5);
  const StepReport a = run(with);
  const StepReport b = run(without);
  const Fastest fast_with(a), fast_without(b);
  const std::string seen =
      "with " + std::to_string(fast_with.overlapped) + " without " + std::to_string(fast_without.overlapped);
  EXPECT_GT(fast_with.overlapped, fast_without.overlapped + 0.5 * with.non_gemm_us) << seen;
  EXPECT_GT(fast_with.serial, fast_without.serial + 0.5 * with.non_gemm_us) << seen;
  EXPECT_GT(fast_with.compute, 0.7 * (with.compute_us + with.non_gemm_us)) << seen;
  // Each part at least most of its planned time (only the lower bound holds
  // in wall time, as in ComputeOnlyTakesAtLeastTheAskedTime); without the
  // work, nothing of it.
  EXPECT_GT(a.parts.products_us, 0.7 * with.compute_us);
  EXPECT_GT(a.parts.non_gemm_us, 0.7 * with.non_gemm_us);
  EXPECT_GT(a.parts.optimizer_us, 0.7 * with.optimizer_us);
  EXPECT_LT(a.parts.optimizer_us, a.parts.non_gemm_us);  // the optimizer is part of the non-GEMM work
  EXPECT_LT(b.parts.non_gemm_us, 1000.0);
  EXPECT_LT(b.parts.optimizer_us, 1000.0);
}

TEST(StepExecutor, DegreesMustCoverTheRanks) {
  StepSchedule s = dp_step(Comm::world().size() + 1, 1000, 1024, 1, 0);
  auto backend = make_mpi_host_backend();
  auto kernel = make_host_kernel();
  EXPECT_THROW(Executor(Comm::world(), *backend, *kernel, s, Dtype::float32), UsageError);
}

TEST(StepExecutor, TensorAndDataGroupsSplitTheRanksAndEveryModeIsMeasured) {
  const int ranks = Comm::world().size();
  StepSchedule s;
  s.tp = 2;
  s.dp = ranks / 2;
  s.compute_us = 2000;
  s.comms.push_back({"TP all-reduce", Op::all_reduce, Group::tp, 64 << 10, 4, 0.0});
  s.comms.push_back({"DP gradient all-reduce", Op::all_reduce, Group::dp, 256 << 10, 2, 0.5});
  const StepReport r = run(s, 3);
  ASSERT_EQ(r.modes.size(), 4u);
  for (const auto& m : r.modes) {
    EXPECT_EQ(m.step.iterations, 3u) << name(m.mode);
    EXPECT_GT(m.step.min_us, 0) << name(m.mode);
    EXPECT_GE(m.slowest_rank, 0);
    EXPECT_LT(m.slowest_rank, ranks);
  }
  ASSERT_EQ(r.comms.size(), 2u);
  EXPECT_GT(r.comms[0].per_call_us, 0);  // tp groups of two ranks
  if (s.dp > 1) {
    EXPECT_GT(r.comms[1].per_call_us, 0);
  } else {
    EXPECT_EQ(r.comms[1].per_call_us, 0);  // a group of one rank: nothing to send
  }
  EXPECT_DOUBLE_EQ(r.comms[0].per_step_us, 4 * r.comms[0].per_call_us);
}

TEST(StepExecutor, GroupColoursFollowTheModelsRankOrder) {
  StepSchedule s;
  s.tp = 2;
  s.dp = 3;
  s.pp = 2;  // 12 ranks: tp fastest, then dp, then pp
  // Ranks 0,1 share a tp group; 0,2,4 a dp group; 0,6 a pp group.
  EXPECT_EQ(group_colour(Group::tp, 0, s), group_colour(Group::tp, 1, s));
  EXPECT_NE(group_colour(Group::tp, 1, s), group_colour(Group::tp, 2, s));
  EXPECT_EQ(group_colour(Group::dp, 0, s), group_colour(Group::dp, 4, s));
  EXPECT_NE(group_colour(Group::dp, 0, s), group_colour(Group::dp, 1, s));
  EXPECT_EQ(group_colour(Group::pp, 0, s), group_colour(Group::pp, 6, s));
  EXPECT_NE(group_colour(Group::pp, 0, s), group_colour(Group::pp, 2, s));
}

}  // namespace
// The watchdog's abort reaches whichever call is in flight: each time a call
// is polled while in flight, the test asks the board to abort its active
// group, as the watchdog does on a hang, and the probe counts the aborts its
// own group received. A call queued under the compute (overlapped) is the
// active group as a blocking call is; before, only blocking calls were, and
// a hung queued call (an NCCL gradient bucket) ended its process with its
// communicator unaborted.
struct AbortProbe {
  ProgressBoard board;
  int polled_in_flight = 0;
  int aborts_received = 0;
};

class AbortProbeOp final : public ForwardingOp {
 public:
  AbortProbeOp(std::unique_ptr<PreparedOp> inner, AbortProbe& probe) : ForwardingOp(std::move(inner)), probe_(probe) {}
  void start() override {
    pending_ = true;
    inner().start();
  }
  bool finished() override {
    if (pending_) {
      ++probe_.polled_in_flight;
      probe_.board.abort_active_group();
    }
    const bool done = inner().finished();
    pending_ = pending_ && !done;
    return done;
  }

 private:
  AbortProbe& probe_;
  bool pending_ = false;
};

class AbortProbeGroup final : public ObservedGroup<AbortProbeOp, AbortProbe> {
 public:
  using ObservedGroup::ObservedGroup;
  void abort() override { ++ctx_.aborts_received; }  // counted, not acted on: the step goes on
};

using AbortProbeBackend = ObservedBackend<AbortProbeGroup, AbortProbe>;

TEST(StepExecutor, TheWatchdogsAbortReachesACallQueuedUnderTheCompute) {
  // Only gradient buckets queued under the compute: in overlapped mode every
  // call is in flight while the compute polls it.
  const StepSchedule s = dp_step(Comm::world().size(), 4000, 64 << 10, 3, 0.5);
  AbortProbe probe;
  AbortProbeBackend backend(make_mpi_host_backend(), probe);
  auto kernel = make_host_kernel();
  {
    Executor ex(Comm::world(), backend, *kernel, s, Dtype::float32, {.board = &probe.board});
    ex.run(1, 0);
  }
  ASSERT_GT(probe.polled_in_flight, 0);
  EXPECT_EQ(probe.aborts_received, probe.polled_in_flight)
      << "polled in flight " << probe.polled_in_flight << " times, its group aborted " << probe.aborts_received;
}

}  // namespace fb::step
