// A `run --graph` on the nccl backend through the doubles, ended by SIGTERM
// (a scheduler's time limit, scancel) while a graph-captured row is measured:
// the job ends with the signal's status, the record keeps every finished row
// and says the signal ended the run, the row in flight is not written, and
// every rank's communicator is aborted through the collective library.
//
// Why a job of its own: an ending signal ends the process by the signal's
// default action (die_of, so the launcher sees what it sent), which inside
// this gtest job would end the job. So rank 0 of this job starts a fresh
// mpirun of this binary that runs only the scenario (a disabled test, run
// when asked for by name), and judges what that job left: its exit status,
// its stderr and its record. The signal lands mid-row by construction, not by
// timing: the NCCL double sends it from the row's first graph replay and
// stalls the simulated GPUs there, so the row cannot finish first.
//
// The same jobs for a run ended while its backend opens: NCCL's initialisation
// hangs (the double's fault) and the hang watchdog or a SIGTERM sent from the
// initialisation ends it; every rank's half-made communicator is aborted.
// And `step`, whose groups are opened before its record: through the
// measuring sequence itself (cli/measuring_command.hpp), a hang there ends
// with the timeout, no record written.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sinks.hpp"
#include "json_lines.hpp"
#include "nccl/nccl_backend.hpp"
#include "process.hpp"
#include "sim_devices.hpp"
#include "fabricbench/step/executor.hpp"
#include "measuring_command.hpp"
#include "sim_nccl.hpp"
#include "watched_run.hpp"

namespace fb {
namespace {

constexpr const char* kRecordVariable = "FB_SIM_SIGNAL_RECORD";
constexpr int kJobRanks = 4;
// The sweep: all_reduce out of place at 1K, 4K and 16K; the signal comes in the 16K row.
constexpr std::uint64_t kSignalledBytes = 16 << 10;

RunOptions graph_sweep() {
  RunOptions o;
  o.backend = "nccl";
  o.ops = {Op::all_reduce};
  o.grid = {1024, kSignalledBytes, 4.0, 0};
  o.iters = 3;
  o.warmup = 1;
  o.check = true;
  o.graph = true;
  o.in_place = false;
  return o;
}

// The scenario, as `fabricbench run` measures (cli/measuring_command.cpp):
// the watched run, rank 0's record opened under it and closed by the
// watchdog when the run ends early. Runs only in the job the test below starts.
// A watched nccl run over the doubles with `faults`, rank 0's record at the
// path the launching test gives; it must end early, through the watchdog.
void run_watched_scenario(test::SimNcclFaults faults, watch::TimeoutPolicy timeout, const RunOptions& options,
                          const char* never_came) {
  const char* record = std::getenv(kRecordVariable);
  ASSERT_NE(record, nullptr) << "run by a SimSignal test that sets " << kRecordVariable;
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  test::SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  test::SimNccl lib(world.size(), faults);
  auto backend = make_nccl_backend(devices, lib);
  cli::WatchedRun watched(world, nodes, timeout, "run");
  std::unique_ptr<RowSink> sink;
  watched.run([&] {
    if (world.rank() == 0) {
      const auto open = [&] {
        sink = make_record_sink(record, false);
        sink->begin(test::simulated_run_header(*backend, world.size()));
      };
      watched.open_record(open, [&](const Summary& summary) { sink->abort(summary); });
    }
    Runner runner(world, nodes, *backend, options, sink.get());
    runner.watch(&watched.board());
    runner.preflight();
    runner.run();
  });
  if (sink) sink->end(Summary{});
  ADD_FAILURE() << "the run ended normally: " << never_came;
}

TEST(SimSignal, DISABLED_GraphRunEndedBySigterm) {
  run_watched_scenario({.signal = SIGTERM, .signal_in_replay_of = kSignalledBytes}, watch::TimeoutPolicy{60},
                       graph_sweep(), "the signal never came");
}

// Runs the disabled test `scenario` of this binary as a job of its own, its record at `record`.
test::ProcessResult run_scenario(const std::string& scenario, const std::string& record) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  // A job of its own, not ranks of this one: without this launcher's environment.
  return test::run_process(
      "timeout 120 env -i PATH=\"$PATH\" LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH\" OMPI_ALLOW_RUN_AS_ROOT=1 "
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
      std::string(kRecordVariable) + "=" + record + " " + test::mpirun(kJobRanks) + " " + self +
      " --gtest_also_run_disabled_tests --gtest_filter=SimSignal." + scenario + " </dev/null");
}

// What the scenario's job left, on rank 0 of this job.
void expect_signal_ending(const std::string& record) {
  const auto r = run_scenario("DISABLED_GraphRunEndedBySigterm", record);
  // docs/run.md: a run ended by signal n ends with 128 + n.
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  const Results res = read_results(record);  // every line whole, or this throws
  EXPECT_EQ(res.status, "killed") << r.err;
  const auto summary = test::json_lines(record).back();
  EXPECT_EQ(summary.value("exit_code", 0), 128 + SIGTERM) << summary.dump();
  EXPECT_EQ(summary["report"].value("signal", ""), "SIGTERM") << summary.dump();
  // The rows finished before the signal, verified; not the one in flight.
  ASSERT_EQ(res.measurements.size(), 2u) << r.err;
  EXPECT_EQ(res.measurements[0].bytes, 1024u);
  EXPECT_EQ(res.measurements[1].bytes, 4096u);
  for (const Measurement& m : res.measurements) {
    EXPECT_EQ(m.op, "all_reduce");
    EXPECT_EQ(m.wrong, 0) << m.bytes;
  }
  // Each rank's row communicator torn down by ncclCommAbort (the double says so), not left to the process's end.
  for (int rank = 0; rank < kJobRanks; ++rank)
    EXPECT_NE(r.err.find(fmt::format("SimNccl: rank {} aborted a communicator", rank)), std::string::npos)
        << "rank " << rank << ":\n"
        << r.err;
}

// Rank 0 of this job judges, by `expect`, the record a scenario's job left in
// a folder of its own; the other ranks wait.
void on_rank_zero(const char* file, void (*expect)(const std::string& record)) {
  const Comm world = Comm::world();
  if (world.rank() == 0) {
    const std::string dir = test::make_temp_dir("fb_sim_signal_");
    try {
      expect(dir + "/" + file);
    } catch (const std::exception& e) {  // an unreadable record: fail here, still meet the others below
      ADD_FAILURE() << e.what();
    }
    std::filesystem::remove_all(dir);
  }
  world.barrier_quiet();  // the other ranks wait without spinning on the cores the job needs
}

TEST(SimSignal, ARunEndedBySigtermMidGraphRowKeepsFinishedRowsAndAbortsNccl) {
  on_rank_zero("killed.jsonl", expect_signal_ending);
}

// ---- Ended while the backend opens (issue 34, defect 11) ----
// NCCL's initialisation of the world communicator never completes (the
// double's hang_in_init); the run ends there, by the hang watchdog or by a
// signal, and every rank's half-made communicator must be torn down by
// ncclCommAbort on the engine's thread before the process ends.

RunOptions one_row() {
  RunOptions o;
  o.backend = "nccl";
  o.ops = {Op::all_reduce};
  o.grid = {1024, 1024, 2.0, 0};
  o.iters = 1;
  o.warmup = 0;
  return o;
}

// The scenario as in DISABLED_GraphRunEndedBySigterm, hanging in the first open.
void run_hung_open(test::SimNcclFaults faults, watch::TimeoutPolicy timeout) {
  run_watched_scenario(faults, timeout, one_row(), "the initialisation never hung");
}

TEST(SimSignal, DISABLED_InitHangEndedByWatchdog) { run_hung_open({.hang_in_init = true}, watch::TimeoutPolicy{2}); }

TEST(SimSignal, DISABLED_InitHangEndedBySigterm) {
  run_hung_open({.hang_in_init = true, .signal = SIGTERM, .signal_in_init = true}, watch::TimeoutPolicy{60});
}

// Each rank's world communicator, still initialising, aborted through the
// library (the double says so), not dropped by the process's end.
void expect_half_made_aborted(const test::ProcessResult& r) {
  for (int rank = 0; rank < kJobRanks; ++rank)
    EXPECT_NE(r.err.find(fmt::format("SimNccl: rank {} aborted a communicator of {} ranks, its initialisation "
                                     "unfinished",
                                     rank, kJobRanks)),
              std::string::npos)
        << "rank " << rank << ":\n"
        << r.err;
}

void expect_init_hang_ending(const std::string& record) {
  const auto r = run_scenario("DISABLED_InitHangEndedByWatchdog", record);
  EXPECT_EQ(r.exit_code, kExitRunError) << r.err;  // docs/run.md: a hang ends with 3
  const Results res = read_results(record);
  EXPECT_EQ(res.status, "hang") << r.err;
  EXPECT_TRUE(res.measurements.empty());
  expect_half_made_aborted(r);
}

void expect_init_signal_ending(const std::string& record) {
  const auto r = run_scenario("DISABLED_InitHangEndedBySigterm", record);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  const Results res = read_results(record);
  EXPECT_EQ(res.status, "killed") << r.err;
  EXPECT_EQ(test::json_lines(record).back()["report"].value("signal", ""), "SIGTERM");
  EXPECT_TRUE(res.measurements.empty());
  expect_half_made_aborted(r);
}

TEST(SimSignal, AHangInNcclInitEndedByTheWatchdogAbortsEveryHalfMadeCommunicator) {
  on_rank_zero("hang.jsonl", expect_init_hang_ending);
}

TEST(SimSignal, ASigtermDuringNcclInitAbortsEveryHalfMadeCommunicator) {
  on_rank_zero("killed.jsonl", expect_init_signal_ending);
}

// ---- step: its groups opened under the watchdog, before the record ----

// A compute that returns at once: the step never gets that far.
class NoCompute final : public ComputeKernel {
 public:
  void compute(double, const std::function<void()>&) override {}
  std::string describe() const override { return "no compute (the step ends before it)"; }
};

// `fabricbench step`'s part of the measuring sequence as step_command.cpp
// wires it, over the doubles: the executor, whose constructor opens the
// calls' groups, made in prepare_watched() with the watchdog's board.
class StepOverDoubles final : public cli::Measuring {
 public:
  StepOverDoubles(Backend& backend, std::uint64_t call_bytes) : backend_(backend) {
    schedule_.tp = 4;  // the whole job: one group
    schedule_.compute_us = 100;
    schedule_.comms.push_back({"TP all-reduce", Op::all_reduce, step::Group::tp, call_bytes, 1, 0});
  }
  // Placement, as step's make_compute does first.
  void prepare() override { set_up_backend(job().world, backend_, RunOptions{}); }
  void watch(ProgressBoard& board) override { board_ = &board; }
  void prepare_watched() override {
    executor_ = std::make_unique<step::Executor>(job().world, backend_, compute_, schedule_, Dtype::float32,
                                                 step::ExecutorOptions{.board = board_});
  }
  void measure() override { (void)executor_->run(1, 0); }
  Summary close(double seconds) override {
    Summary summary;
    summary.elapsed_s = seconds;
    return summary;
  }

 private:
  Backend& backend_;
  NoCompute compute_;
  step::StepSchedule schedule_;
  ProgressBoard* board_ = nullptr;
  std::unique_ptr<step::Executor> executor_;
};

// The step over the doubles, as a job of its own, through the measuring
// sequence; it must end before measuring (`never_came`).
void run_step_scenario(test::SimNcclFaults faults, std::uint64_t gpu_bytes, std::uint64_t call_bytes,
                       const char* never_came) {
  const char* record = std::getenv(kRecordVariable);
  ASSERT_NE(record, nullptr) << "run by a SimSignal test that sets " << kRecordVariable;
  const Comm world = Comm::world();
  test::SimDevices devices(test::hgx_node(gpu_bytes), {0, 1, 2, 3, 4, 5, 6, 7});
  test::SimNccl lib(world.size(), faults);
  auto backend = make_nccl_backend(devices, lib);
  StepOverDoubles command(*backend, call_bytes);
  char name[] = "fabricbench";
  char* argv[] = {name, nullptr};
  const int code =
      cli::measure(world, 1, argv, {.command = "step", .timeout = watch::TimeoutPolicy{2}, .record = record}, command);
  if (code == kExitUsage) std::exit(code);  // refused, as the binary would exit
  ADD_FAILURE() << "the step ended with " << code << ": " << never_came;
}

TEST(SimSignal, DISABLED_StepInitHangEndedByWatchdog) {
  run_step_scenario({.hang_in_init = true}, test::kSimGpuBytes, 4096, "its initialisation never hung");
}

// A call's buffers that do not fit the (1 MiB) GPUs: refused once its group is open.
TEST(SimSignal, DISABLED_StepCallThatDoesNotFitRefused) {
  run_step_scenario({}, std::uint64_t{1} << 20, std::uint64_t{4} << 20, "the call fitted");
}

void expect_step_init_hang_ending(const std::string& record) {
  const auto r = run_scenario("DISABLED_StepInitHangEndedByWatchdog", record);
  EXPECT_EQ(r.exit_code, kExitRunError) << r.err;  // docs/run.md: a hang ends with 3
  EXPECT_NE(r.err.find("fabricbench step: hang"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("all_reduce"), std::string::npos) << "the call whose group hung is named:\n" << r.err;
  // Hung before the record was opened: none is left behind, as for a refusal.
  EXPECT_FALSE(std::filesystem::exists(record)) << r.err;
  expect_half_made_aborted(r);
}

// Opened under the watchdog, a refusal that needs the open group is still a
// refusal: exit 2 on every rank, one message naming the call, no record.
void expect_step_refusal(const std::string& record) {
  const auto r = run_scenario("DISABLED_StepCallThatDoesNotFitRefused", record);
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("fabricbench step: 'TP all-reduce': 4 MiB does not fit in device memory"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("give the compute less (--gemm-size)"), std::string::npos) << "the fix is named:\n" << r.err;
  EXPECT_EQ(r.err.find("hang"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(record)) << r.err;
}

TEST(SimSignal, AStepCallThatDoesNotFitIsRefusedWithExitTwoOnceItsGroupIsOpen) {
  on_rank_zero("step.jsonl", expect_step_refusal);
}

// Before, step opened its groups before the watchdog started: the job waited
// for the scheduler's limit (here the scenario's `timeout 120`).
TEST(SimSignal, AHangInStepsNcclInitEndsWithTheTimeoutAndAbortsEveryHalfMadeCommunicator) {
  on_rank_zero("step.jsonl", expect_step_init_hang_ending);
}

}  // namespace
}  // namespace fb
