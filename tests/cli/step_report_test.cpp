// `fabricbench step`'s text: its three tables under "# " heads, each column
// under its head (the first table's head is longer than its old width).
#include <gtest/gtest.h>

#include "fabricbench/model/workload.hpp"
#include "step_report.hpp"

namespace fb::cli {
namespace {

step::ModeTimes times(step::Mode mode, double median_us) {
  step::ModeTimes t;
  t.mode = mode;
  t.step.median_us = median_us;
  t.step.min_us = median_us - 1;
  t.step.p99_us = median_us + 2;
  t.step.iterations = 20;
  t.slowest_rank = 3;
  return t;
}

TEST(StepText, TablesLineUpUnderTheirHeads) {
  model::Workload w;
  w.name = "toy";
  step::StepSchedule schedule;
  schedule.dp = 2;
  schedule.comms = {{"DP gradient all-reduce", Op::all_reduce, step::Group::dp, 1048576, 2, 0.5}};
  step::StepReport report;
  report.modes = {times(step::Mode::compute_only, 100), times(step::Mode::comm_only, 50),
                  times(step::Mode::serial, 150), times(step::Mode::overlapped, 120)};
  report.comms = {{"DP gradient all-reduce", 25, 50}};
  report.parts = {85, 15, 4};
  step::Prediction p{"workload rate", "400G-IB", "h100", 80, 10, 4, 40, 10, 100, 0.3077, 0.1, 0.9, -16.7};
  const StepView v{w, schedule, report, "matmul", "mpi", {p}};
  const std::string text = step_text(v);
  EXPECT_EQ(
      text.substr(text.find('\n') + 1),
      "# measured (slowest rank)    median_us       min_us       p99_us    steps\n"
      "  compute_only                   100.0         99.0        102.0       20\n"
      "  comm_only                       50.0         49.0         52.0       20\n"
      "  serial                         150.0        149.0        152.0       20\n"
      "  overlapped                     120.0        119.0        122.0       20\n"
      "  communication share 33.3% of compute + communication, 16.7% of the step exposed; efficiency 83.3%; "
      "overlap hid 30.0 us; slowest rank 3\n"
      "# collective                   group             op   bytes/call   calls  window      us/call      us/step\n"
      "  DP gradient all-reduce          dp     all_reduce      1048576       2   50.0%         25.0         50.0\n"
      "# model, basis        compute_us  non_gemm_us  optimizer_us     comm_us  exposed_us     step_us    share  "
      "exposed step diff   network / node\n"
      "  measured                  85.0         15.0           4.0        50.0        20.0       120.0    33.3%    "
      "16.7%\n"
      "  workload rate             80.0         10.0           4.0        40.0        10.0       100.0    30.8%    "
      "10.0%    -16.7%   400G-IB / h100\n"
      "  (compute_us: the products; non_gemm_us: the memory-bound work, optimizer_us of it included; step_us holds "
      "them all. The model's step leaves out the pipeline bubble, which the executor does not run)\n");
}

}  // namespace
}  // namespace fb::cli
