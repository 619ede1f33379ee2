// The engine's port: the data plane behind one interface. The engine prepares
// an op on a group (a scope's communicator) and times it; a backend moves the
// bytes: host MPI, MPI on device buffers, NCCL, CUDA copies. Backends never
// print: they return what they know (support, path, errors) and the engine
// reports it. Which backends exist is the registry's business
// (fabricbench/backends/registry.hpp); the engine knows only this port.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/check_values.hpp"
#include "fabricbench/core/clock.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

struct OpSpec {
  Op op = Op::all_reduce;
  Dtype dtype = Dtype::float32;
  RedOp redop = RedOp::sum;
  int root = 0;
  bool in_place = false;
  Layout layout;
  // Point-to-point ops: the two ranks (in the group) and the window of
  // messages in flight per iteration for the bandwidth ops.
  int peer_a = 0;
  int peer_b = 1;
  int window = 64;
};

// Whether a backend can run something, and if not why (for the user).
struct Support {
  bool ok = true;
  std::string why;
  static Support yes() { return {}; }
  static Support no(std::string reason) { return {false, std::move(reason)}; }
};

// Rules every backend applies the same way.
// The other rank of a point-to-point op, or -1 when `rank` is not one of the pair.
int pair_peer(const OpSpec& spec, int rank);
// A ping-pong iteration is a round trip (2 ops), a bandwidth iteration a window of messages.
double ops_per_iteration(const OpSpec& spec);
// What the check expects of `rank`'s output (unidir: only peer_b receives).
CheckContext check_context(const OpSpec& spec, int rank, int nranks);

class Backend;
// Does `backend` run `op` at all (Backend::ops)? "No" names the op, the
// backend, what it runs and where the op runs instead.
Support backend_runs(const Backend& backend, Op op);
// What the engine asks of every spec: backend_runs, then the backend's supports().
Support support_for(const Backend& backend, const OpSpec& spec);

// Per-iteration timing the engine collects. `start_us` is when this rank
// entered the iteration (on the engine's clock), `duration_us` how long the
// iteration took on this rank until its part was complete.
struct IterationTimes {
  std::span<double> start_us;
  std::span<double> duration_us;
  // Progress for the watchdog (progress.hpp), null when nobody watches: add
  // one per iteration as it is issued, with count_issued() (a plain store, no
  // syscall). A rank that never issues iteration k while its peers did is the
  // one they wait on. Backends that queue a batch asynchronously should count
  // iterations as they complete instead, so a long queue is not taken for a hang.
  std::atomic<std::int64_t>* issued = nullptr;
  // The slowest rank's time per iteration of this op so far, the same on
  // every rank (0: none yet): backends size their timing groups from it
  // (timing_group_size), so every rank times in groups of the same size.
  double agreed_us = 0;
  // Out, may be null: how many consecutive iterations one timing spanned (a
  // timing group, an event group, a graph batch), each given that span's
  // mean. Backends that time every iteration alone leave it; the engine then
  // counts one independent sample per span, not per iteration (Timing::sample_us).
  std::size_t* iterations_per_timing = nullptr;
  // Every rank ends each iteration in step (OpDesc::answered): the host's
  // wall-clock timing times each alone; the device's events group as ever.
  bool in_step = false;
};

// Iterations timed one by one, then each given its timing group's mean (the
// groups PreparedOp::run_timed times whole: timing_groups.hpp), with the
// group reported through iterations_per_timing.
void average_in_groups(IterationTimes times);

inline void count_issued(std::atomic<std::int64_t>* issued) {
  // One writer (the engine's thread): load + store, no locked read-modify-write.
  if (issued) issued->store(issued->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  // One iteration; returns when this rank's part is complete. Its buffers
  // are then final and free: --check all refills them for the next one.
  virtual void run() = 0;
  // `times.start_us.size()` back-to-back iterations. The default calls run()
  // and reads the wall clock around each group of them (timing_groups.hpp:
  // iterations shorter than 50 us in groups, each given its group's mean);
  // device backends override it to queue the iterations and time them with
  // events, grouped by the same rule.
  virtual void run_timed(IterationTimes times);
  // Start one iteration without waiting for it, so a training step can run it
  // under compute; finished() polls (and drives) it. The defaults run the
  // iteration to completion inside start().
  virtual void start() { run(); }
  virtual bool finished() { return true; }
  // Write the check pattern into the inputs and poison the outputs.
  virtual void fill_check() = 0;
  // Wrong output elements of this rank after one iteration on filled inputs.
  virtual std::uint64_t count_wrong() = 0;
  // Does this rank take part in the op? (p2p ops: only the two peers.)
  virtual bool participates() const { return true; }
  // Does the first iteration set up connections (NCCL connects lazily,
  // NCCL_RUNTIME_CONNECT=1 by default)? The engine then runs one untimed
  // connecting iteration before the warm-up, whose first iteration sizes the batches.
  virtual bool connects_lazily() const { return false; }
  // Operations one iteration counts for: a ping-pong iteration is a round
  // trip (2), a bandwidth iteration a window of messages. Times per op are
  // iteration times divided by this.
  virtual double ops_per_iteration() const { return 1.0; }
  // (Fault injection reaches an op's output through CorruptibleOutput,
  // fabricbench/backends/corruptible.hpp, not through this port.)
};

// A backend's communicator for one scope group.
class BackendGroup {
 public:
  virtual ~BackendGroup() = default;
  // Allocate (and touch) buffers once for the largest op of the plan.
  virtual void reserve(std::uint64_t in_bytes, std::uint64_t out_bytes) = 0;
  // Make room for `spec`'s buffers before prepare(). "No" skips this size
  // with the reason (a device buffer that does not fit) and the sweep goes
  // on; the engine agrees on it across ranks. Host backends allocate in
  // reserve() and always have room.
  virtual Support allocate(const OpSpec& spec);
  virtual std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) = 0;
  // The path the traffic takes, as best the backend knows ("shm", "tcp", "P2P/NVLink" ...).
  // Collective over the group: every member calls it for every row, after
  // the row's traffic (NCCL connects peers lazily, at the first op that needs
  // them), so a backend may gather what each member saw.
  virtual std::string path() const = 0;
  // Called by the watchdog from its own thread when the run is being aborted
  // (a hang, a lost rank), while the engine's thread may be blocked inside an
  // op of this group: make blocked calls return or at least release the
  // device (NCCL: ncclCommAbort). Must not wait for the engine's thread.
  // Default: nothing (MPI has no per-communicator abort; MPI_Abort follows).
  virtual void abort() {}
  // Whether abort() ends the engine's wait in this group: its thread, which
  // polls, then tears the group's library state down itself (NCCL:
  // ncclCommAbort) and leaves the group. A process about to end waits for
  // that (ProgressBoard::abort_active_group_and_wait) instead of leaving the
  // communicator to the process's end.
  virtual bool abort_ends_wait() const { return false; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual std::string version() const = 0;  // library version for the record
  // Does it run on the test doubles of the GPU backends (tests only)? Its
  // records then say so (RunHeader::simulated), and check and model refuse them.
  virtual bool simulated() const { return false; }
  // Are its buffers in GPU memory? Its rows then use the node's GPUs, and a
  // GPU's error counter that moved during one is the row's (row_counters.hpp).
  virtual bool on_gpus() const { return false; }
  // Does its traffic between nodes of one NVLink domain spanning hosts take
  // that NVLink (scope.hpp)? Then the inter scope takes one rank per domain.
  virtual DomainTraffic domain_traffic() const { return DomainTraffic::network; }
  // The ops this backend has code for, as data. The engine refuses every other
  // op (backend_runs) before it asks supports() or prepares anything, so an op
  // a backend does not implement is never timed.
  virtual OpSet ops() const = 0;
  // Where the ops it does not run are measured, for the refusal
  // ("copy paths inside a node run on --backend cuda"); may be empty.
  virtual std::string_view elsewhere() const { return {}; }
  // Whether it can run `spec` (an op of ops()): datatype, reduction, size, placement.
  virtual Support supports(const OpSpec& spec) const = 0;
  // Memory for `bytes_per_rank` with `local_ranks` ranks on this node; an
  // error text when it will not fit.
  virtual Support fits(std::uint64_t bytes_per_rank, int local_ranks) const = 0;
  // Collective over the world, once before anything is measured: take the
  // run's backend options (--device, --graph) and check where this rank runs
  // (one GPU per rank...). "No" stops the run as bad input, on every rank.
  // The default refuses the GPU options, which host backends have no use for.
  virtual Support setup(const Comm& world, const RunOptions& options);
  // Collective over `comm`: every member calls it. The world ranks in none
  // of the groups opened at that point (a scope's non-members, ranks sitting
  // out a pairs round) call skip_open() instead, so a backend that splits its
  // groups from one world communicator (NCCL: ncclCommSplit) has every rank
  // of it in the split.
  virtual std::unique_ptr<BackendGroup> open(const Comm& comm) = 0;
  virtual void skip_open() {}
  // Called by the watchdog from its own thread while the engine's thread may
  // be blocked in open() or skip_open() (NCCL: the world communicator's
  // initialisation, a split): make the blocked call end with an error, as
  // BackendGroup::abort() does for an op; there is no group to abort yet.
  // Must return at once. Default: nothing.
  virtual void abort_open() {}
  // Whether abort_open() ends the engine's wait in open() or skip_open(): its
  // thread, which polls, then tears the half-made communicator down itself
  // (NCCL: ncclCommAbort) and leaves the open with an error. A process about
  // to end waits for that (ProgressBoard::abort_active_group_and_wait), as for
  // BackendGroup::abort_ends_wait.
  virtual bool abort_open_ends_wait() const { return false; }
  // After setup(): the CPUs next to this rank's device (its GPU's local CPUs),
  // where the engine holds the rank's thread while it is timed (cpu_pin.hpp);
  // empty: no preference (host backends).
  virtual std::vector<int> near_cpus() const { return {}; }
  // What setup() changed or found that the user should hear of (NCCL's debug
  // settings...), for the run to say once: backends never print.
  virtual std::vector<std::string> notes() const { return {}; }
};

// Collective over the world, once per command before anything is measured:
// the backend's setup() (its options, and where each rank runs: one GPU per
// rank), agreed across ranks. Throws UsageError, on every rank alike, with any
// rank's refusal; world rank 0 logs the backend's notes.
void set_up_backend(const Comm& world, Backend& backend, const RunOptions& options);

}  // namespace fb
