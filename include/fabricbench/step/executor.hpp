// Runs a synthetic training step on every rank and measures it four ways:
//   compute_only  the compute alone (communication switched off): products,
//                 non-GEMM work and optimizer, each timed
//   comm_only     every call of the step back to back, no compute
//   serial        compute with every call blocking where it is issued
//   overlapped    calls inside their window run under the compute, one at a
//                 time in issue order (one communication stream, as NCCL and
//                 PyTorch's DDP use), blocking calls stop the compute
// Each measured over repeated steps, per step the slowest rank; the modes
// take turns step by step.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/step/compute.hpp"
#include "fabricbench/step/schedule.hpp"

namespace fb::step {

enum class Mode { compute_only, comm_only, serial, overlapped };
std::string_view name(Mode m);

struct ModeTimes {
  Mode mode = Mode::overlapped;
  TimeStats step;  // per step, slowest rank
  int slowest_rank = -1;  // world rank with the largest mean step time
  double slowest_rank_mean_us = 0;
};

// The compute_only step's parts (StepSchedule's): per step the slowest
// rank's, median over steps. non_gemm_us holds optimizer_us, as the model's does.
struct ComputeParts {
  double products_us = 0;
  double non_gemm_us = 0;
  double optimizer_us = 0;
};

struct CommTimes {
  std::string name;
  double per_call_us = 0;  // median over steps of the slowest rank, from comm_only
  double per_step_us = 0;
};

struct StepReport {
  std::vector<ModeTimes> modes;  // in the order of Mode
  std::vector<CommTimes> comms;  // per StepComm, in schedule order
  ComputeParts parts;            // what compute_only spent on each part
  const ModeTimes& times(Mode m) const { return modes[static_cast<std::size_t>(m)]; }
  // Medians: compute C, communication K, overlapped step S, serial step Z.
  double compute_us() const { return times(Mode::compute_only).step.median_us; }
  double comm_us() const { return times(Mode::comm_only).step.median_us; }
  double step_us() const { return times(Mode::overlapped).step.median_us; }
  double serial_us() const { return times(Mode::serial).step.median_us; }
  double comm_share() const { return comm_us() / (compute_us() + comm_us()); }  // nothing overlapped
  double exposed_us() const { return std::max(0.0, step_us() - compute_us()); }
  double exposed_share() const { return exposed_us() / step_us(); }
  double efficiency() const { return compute_us() / step_us(); }
  double hidden_us() const { return std::max(0.0, serial_us() - step_us()); }
};

// How an Executor is watched and what it runs.
struct ExecutorOptions {
  // The hang watchdog's board (may be null). The groups are opened under it
  // (a `setup` step per call, labelled with it): a hang in NCCL's
  // initialisation or a split is judged and aborted like one in a call. Then
  // each stretch of compute is a `compute` phase (not an op: never a hang by
  // itself), each blocking call and the wait for the queued ones at the end of
  // a step a `timed` phase labelled with the call, so a call that does not
  // complete within the timeout is reported, naming the ranks that never issued it.
  ProgressBoard* board = nullptr;
  // A call whose group is this rank alone moves nothing and is skipped,
  // unless this is set (tests on one GPU: the calls then run, as copies,
  // under the compute).
  bool run_one_rank_groups = false;
};

class Executor {
 public:
  // Collective over `world`: builds the tp/pp/dp communicators and prepares
  // every call on `backend`. Throws UsageError on a schedule the ranks or the
  // backend cannot run, alike on every rank.
  Executor(const Comm& world, Backend& backend, ComputeKernel& kernel, StepSchedule schedule, Dtype dtype,
           ExecutorOptions options = {});
  ~Executor();
  StepReport run(int steps, int warmup);

 private:
  struct Call;
  double one_step(Mode mode);
  void stretch(double us, const std::function<void()>& poll);
  void pump();
  void wait_for(PreparedOp& op);
  double timed_step(Mode mode);
  ComputeParts compute_alone();
  ComputeParts summarize_parts(const std::vector<ComputeParts>& steps);
  ModeTimes summarize_mode(Mode mode, std::vector<double> times);
  double call_alone_us(std::size_t comm, int repeats);
  void enter(Phase phase);
  void label(std::size_t comm);
  void blocking_call(std::size_t comm);
  void start(std::size_t comm);
  void drain();

  const Comm& world_;
  ComputeKernel& kernel_;
  StepSchedule schedule_;
  std::vector<std::unique_ptr<BackendGroup>> groups_;  // one per comm: own buffers, own communicator
  std::vector<std::unique_ptr<PreparedOp>> ops_;       // null where this rank's group has one rank
  std::vector<Comm> comms_;
  std::deque<std::size_t> queue_;  // calls waiting for the stream, by comm index
  PreparedOp* in_flight_ = nullptr;
  // in_flight_'s group, active on the board while the call is in flight;
  // after groups_, so it leaves the board before its group goes.
  std::optional<ActiveGroup> in_flight_group_;
  ComputeParts last_parts_;  // of the last compute_only step
  ProgressBoard* board_ = nullptr;
};

}  // namespace fb::step
