// What this rank is doing right now, published by the engine for the
// watchdog thread (watchdog.hpp) without locks or system calls.
//
// The engine labels each measurement and enters a new step at fixed points
// (set-up, warm-up, timed batch, check, control collective); backends bump
// one counter per iteration they issue. Every rank passes through the same
// steps in the same order (the engine is SPMD), so (step, iteration) compares
// across ranks: the rank furthest behind is the one the others wait on.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "fabricbench/core/types.hpp"

namespace fb {

class Backend;
class BackendGroup;

enum class Phase : std::uint8_t {
  idle,    // outside the engine's sweep (start-up, end of the run)
  setup,   // opening a scope's backend group or preparing an op
  warmup,  // warm-up iterations of an op
  timed,   // timed iterations of an op
  check,   // the verified iteration of -c (and its fill)
  sync,    // the engine's control collectives: waiting for the other ranks
  compute, // a training step's compute (fabricbench step), calls may run under it
};
inline constexpr int kPhaseCount = 7;
std::string_view name(Phase phase);
// Phases inside an op: a rank that makes no progress in one for the timeout is hung.
bool in_op(Phase phase);

// A consistent copy of a rank's progress.
struct ProgressSnapshot {
  std::int64_t step = 0;             // steps entered since the start (aligned across ranks)
  std::int64_t iteration = 0;        // iterations issued in this step so far
  std::int64_t first_iteration = 0;  // iterations of this op's phase done in earlier steps (timed batches)
  Phase phase = Phase::idle;
  int op = -1;                       // fb::Op, -1 = none
  int scope = -1;                    // fb::Scope, -1 = none
  std::uint64_t bytes = 0;           // the row's bytes
  bool in_place = false;
  std::uint64_t bytes_per_iteration = 0;  // what one iteration moves: scales the timeout
};
// Lexicographic (step, iteration): which of two ranks got further.
bool behind(const ProgressSnapshot& a, const ProgressSnapshot& b);

class ProgressBoard {
 public:
  // ---- the engine's thread ----
  // Label of the measurement the next steps belong to (scope: fb::Scope or -1).
  void label(Op op, int scope, std::uint64_t bytes, bool in_place, std::uint64_t bytes_per_iteration);
  void label_scope(int scope);  // between measurements: opening a scope
  // A new step; every rank calls this at the same points. `first_iteration`
  // continues an op's iteration count across steps (timed batches).
  void enter(Phase phase, std::int64_t first_iteration = 0);
  // A new step numbered at least `step`: where ranks do different amounts
  // of work between common points (the pairs of a round), each common point
  // starts from the same number, so steps compare across ranks again.
  void enter_at(Phase phase, std::int64_t step);
  // The counter handed to PreparedOp::run_timed (IterationTimes::issued).
  std::atomic<std::int64_t>* issued() { return &issued_; }

  // ---- any thread ----
  ProgressSnapshot read() const;
  // The backend group the engine drives now, so that the watchdog can abort
  // it while the engine's thread is blocked inside it (NCCL: ncclCommAbort).
  // Setting it ends the open registered by set_opening, under one lock: the
  // open's group (none on a rank outside it) takes its place, so an abort
  // always finds one of them; a group that arrives after an abort reached the
  // open is aborted on arrival (the communicator the open made, which the
  // open's abort could not reach).
  void set_active_group(BackendGroup* group);
  // The backend whose open() or skip_open() the engine is in (no group yet):
  // abort_active_group() asks it to end the open (Backend::abort_open).
  void set_opening(Backend* backend);
  // A function that abort_active_group() also calls, for work that is no
  // backend (storage removes its files); plain, so no allocation.
  void set_abort_hook(void (*hook)());
  void abort_active_group();
  // abort_active_group(), then, for a group whose abort the engine's thread
  // acts on (BackendGroup::abort_ends_wait), waits up to `seconds` for that
  // thread to leave the group, its abort done; likewise, with no group, for an
  // opening backend whose abort_open() the thread acts on
  // (Backend::abort_open_ends_wait) to leave open(), its half-made
  // communicator aborted: for a process about to end, which would otherwise
  // end before the thread's next poll. False when the wait ran out (a thread
  // that never polls again: a wedged driver).
  bool abort_active_group_and_wait(double seconds);

 private:
  void abort_locked();  // abort_active_group's work, group_mutex_ held
  void begin_write();
  void end_write();
  void new_step(Phase phase, std::int64_t step, std::int64_t first_iteration);

  // Seqlock: odd while the engine rewrites the label; readers retry.
  std::atomic<std::uint64_t> version_{0};
  std::atomic<std::int64_t> step_{0};
  std::atomic<std::int64_t> first_{0};
  std::atomic<int> phase_{0};
  std::atomic<int> op_{-1};
  std::atomic<int> scope_{-1};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> per_iteration_{0};
  std::atomic<bool> in_place_{false};
  // Written once per iteration by the timed loop: its own cache line, so the
  // watchdog's reads of the label do not pull it away from the engine.
  alignas(64) std::atomic<std::int64_t> issued_{0};
  alignas(64) std::mutex group_mutex_;
  std::condition_variable group_left_;  // the engine's thread left the active group or the open
  BackendGroup* group_ = nullptr;
  Backend* opening_ = nullptr;
  bool open_aborted_ = false;  // an abort reached opening_: the group it hands over is aborted on arrival
  void (*hook_)() = nullptr;
};

// Registers the backend for the length of an open() or skip_open(): a hang in
// NCCL's initialisation or a split can then be aborted like a hang in an op
// (issue 34, defect 11), not only ended by the watchdog's _exit.
class OpeningBackend {
 public:
  OpeningBackend(ProgressBoard* board, Backend* backend) : board_(board) {
    if (board_) board_->set_opening(backend);
  }
  ~OpeningBackend() {
    if (board_) board_->set_opening(nullptr);
  }
  OpeningBackend(const OpeningBackend&) = delete;
  OpeningBackend& operator=(const OpeningBackend&) = delete;

 private:
  ProgressBoard* board_;
};

// Sets the board's abort hook for a scope and clears it on the way out.
class AbortHook {
 public:
  AbortHook(ProgressBoard* board, void (*hook)()) : board_(board) {
    if (board_) board_->set_abort_hook(hook);
  }
  ~AbortHook() {
    if (board_) board_->set_abort_hook(nullptr);
  }
  AbortHook(const AbortHook&) = delete;
  AbortHook& operator=(const AbortHook&) = delete;

 private:
  ProgressBoard* board_;
};

// Sets the active group for a scope and clears it on the way out (also on
// exceptions). Made while the OpeningBackend of the open that made the group
// is still alive, it takes that open's place on the board with no moment
// between; destroy it before the group.
class ActiveGroup {
 public:
  ActiveGroup(ProgressBoard* board, BackendGroup* group) : board_(board) {
    if (board_) board_->set_active_group(group);
  }
  ~ActiveGroup() {
    if (board_) board_->set_active_group(nullptr);
  }
  ActiveGroup(const ActiveGroup&) = delete;
  ActiveGroup& operator=(const ActiveGroup&) = delete;

 private:
  ProgressBoard* board_;
};

}  // namespace fb
