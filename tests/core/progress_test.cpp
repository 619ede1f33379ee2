// The engine's progress board: steps, the per-iteration counter, and
// consistent snapshots for a reader on another thread.
#include "fabricbench/core/progress.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "fabricbench/core/backend.hpp"

namespace fb {
namespace {

TEST(Progress, StepsCountAndResetTheIterationCounter) {
  ProgressBoard board;
  board.label(Op::all_gather, 2, 4096, true, 4096);
  board.enter(Phase::timed, 40);
  count_issued(board.issued());
  count_issued(board.issued());
  ProgressSnapshot s = board.read();
  EXPECT_EQ(s.step, 1);
  EXPECT_EQ(s.iteration, 2);
  EXPECT_EQ(s.first_iteration, 40);
  EXPECT_EQ(s.phase, Phase::timed);
  EXPECT_EQ(s.op, static_cast<int>(Op::all_gather));
  EXPECT_EQ(s.scope, 2);
  EXPECT_TRUE(s.in_place);
  board.enter(Phase::sync);
  s = board.read();
  EXPECT_EQ(s.step, 2);
  EXPECT_EQ(s.iteration, 0);
  EXPECT_TRUE(in_op(Phase::warmup) && in_op(Phase::check) && !in_op(Phase::sync) && !in_op(Phase::setup));
  count_issued(nullptr);  // nobody watching: nothing happens
}

TEST(Progress, BehindComparesStepThenIteration) {
  ProgressSnapshot a;
  ProgressSnapshot b;
  a.step = 3;
  a.iteration = 9;
  b.step = 4;
  EXPECT_TRUE(behind(a, b));
  EXPECT_FALSE(behind(b, a));
  b.step = 3;
  b.iteration = 10;
  EXPECT_TRUE(behind(a, b));
  EXPECT_FALSE(behind(a, a));
}

TEST(Progress, ReaderNeverSeesAHalfWrittenLabel) {
  // The engine rewrites the label while another thread reads: every snapshot
  // must be one label, whole (bytes, per-iteration bytes and scope agree).
  ProgressBoard board;
  // A first label before the reader starts: the board's initial state (no
  // op, scope -1) does not satisfy the test's invariant. Under ASan the
  // reader used to spin on it before this thread's first label.
  board.label(Op::all_reduce, 0, 0, false, 0);
  std::atomic<bool> done{false};
  std::atomic<long> torn{0};
  std::thread reader([&] {
    while (!done) {
      const ProgressSnapshot s = board.read();
      if (s.bytes != s.bytes_per_iteration || static_cast<std::uint64_t>(s.scope) != s.bytes % 4) ++torn;
    }
  });
  for (std::uint64_t i = 0; i < 200000; ++i) {
    board.label(Op::all_reduce, static_cast<int>(i % 4), i, false, i);
    board.enter(Phase::timed);
  }
  done = true;
  reader.join();
  EXPECT_EQ(torn, 0);
}

class CountingGroup final : public BackendGroup {
 public:
  void reserve(std::uint64_t, std::uint64_t) override {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec&) override { return nullptr; }
  std::string path() const override { return ""; }
  void abort() override { ++aborts; }
  int aborts = 0;
};

TEST(Progress, AbortReachesOnlyTheActiveGroup) {
  ProgressBoard board;
  CountingGroup group;
  board.abort_active_group();  // none: nothing to do
  {
    const ActiveGroup active(&board, &group);
    board.abort_active_group();
  }
  board.abort_active_group();  // the scope is over: no longer reachable
  EXPECT_EQ(group.aborts, 1);
}

// A group whose abort the engine's thread acts on, as NCCL's (the flag seen at its next poll).
class PollingGroup final : public BackendGroup {
 public:
  void reserve(std::uint64_t, std::uint64_t) override {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec&) override { return nullptr; }
  std::string path() const override { return ""; }
  void abort() override { aborted = true; }
  bool abort_ends_wait() const override { return true; }
  std::atomic<bool> aborted{false};
};

// A process about to end (a signal, a hang) waits for the engine's thread
// to abort its group and leave it; without that wait it ended before the
// thread's next poll and NCCL's communicator was never aborted.
TEST(Progress, AbortAndWaitReturnsOnceTheEngineLeftTheGroup) {
  ProgressBoard board;
  PollingGroup group;
  std::atomic<bool> entered{false};
  std::thread engine([&] {
    const ActiveGroup active(&board, &group);
    entered = true;
    while (!group.aborted) std::this_thread::yield();  // an op's polled wait
  });
  while (!entered) std::this_thread::yield();
  EXPECT_TRUE(board.abort_active_group_and_wait(60));
  engine.join();
}

// No wait for a group whose abort ends nothing (host MPI), nor when the
// engine's thread is still inside the group when the time is up.
TEST(Progress, AbortAndWaitWaitsOnlyForAGroupThatLeaves) {
  ProgressBoard board;
  CountingGroup host;
  PollingGroup polled;
  {
    const ActiveGroup active(&board, &host);
    EXPECT_TRUE(board.abort_active_group_and_wait(0));
  }
  EXPECT_EQ(host.aborts, 1);
  const ActiveGroup active(&board, &polled);
  EXPECT_FALSE(board.abort_active_group_and_wait(0)) << "still inside the group";
  EXPECT_TRUE(polled.aborted);
}

// A backend whose abort_open() the engine's thread acts on, as NCCL's: the
// flag ends a hang in its initialisation at the thread's next poll.
class PollingOpen final : public Backend {
 public:
  std::string_view name() const override { return "polling-open"; }
  std::string version() const override { return ""; }
  OpSet ops() const override { return {}; }
  Support supports(const OpSpec&) const override { return Support::yes(); }
  Support fits(std::uint64_t, int) const override { return Support::yes(); }
  std::unique_ptr<BackendGroup> open(const Comm&) override { return nullptr; }
  void abort_open() override { aborted = true; }
  bool abort_open_ends_wait() const override { return abort_ends_wait; }
  bool abort_ends_wait = true;
  std::atomic<bool> aborted{false};
};

// A hang while a group opens (NCCL's init, a split): a process about to end
// waits for the engine's thread to abort the half-made communicator and
// leave open(), which it leaves by a throw.
TEST(Progress, AbortAndWaitReturnsOnceTheEngineLeftTheOpen) {
  ProgressBoard board;
  PollingOpen backend;
  std::atomic<bool> entered{false};
  std::thread engine([&] {
    try {
      const OpeningBackend opening(&board, &backend);
      entered = true;
      while (!backend.aborted) std::this_thread::yield();  // init's polled wait
      throw std::runtime_error("NCCL communicator aborted");
    } catch (const std::runtime_error&) {
    }
  });
  while (!entered) std::this_thread::yield();
  EXPECT_TRUE(board.abort_active_group_and_wait(60));
  engine.join();
}

// No wait for an open whose abort ends nothing; a wait that runs out while
// the engine's thread is still in open() says so.
TEST(Progress, AbortAndWaitWaitsOnlyForAnOpenThatEnds) {
  ProgressBoard board;
  PollingOpen backend;
  const OpeningBackend opening(&board, &backend);
  backend.abort_ends_wait = false;
  EXPECT_TRUE(board.abort_active_group_and_wait(0));
  EXPECT_TRUE(backend.aborted);
  backend.abort_ends_wait = true;
  EXPECT_FALSE(board.abort_active_group_and_wait(0)) << "still inside open()";
}

// A signal that lands as open() returns its communicator: the open's abort
// cannot reach what the open has just made, so the group, taking the open's
// place on the board, is aborted on arrival, and a process about to end waits
// for the engine's thread to leave it. Before, the group was set only after
// the open's registration had ended and its buffers were reserved: an abort
// between found neither, and the communicator was never aborted.
TEST(Progress, AnAbortThatReachedTheOpenReachesTheGroupItHandsOver) {
  ProgressBoard board;
  PollingOpen backend;
  PollingGroup group;
  std::atomic<bool> entered{false};
  std::thread engine([&] {
    const OpeningBackend opening(&board, &backend);
    entered = true;
    while (!backend.aborted) std::this_thread::yield();  // open() returning as the abort lands
    const ActiveGroup active(&board, &group);
    // The group's polled wait; bounded, so that the test ends (and fails) if the abort never comes.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!group.aborted && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  });
  while (!entered) std::this_thread::yield();
  EXPECT_TRUE(board.abort_active_group_and_wait(60));
  EXPECT_TRUE(group.aborted) << "the group the aborted open handed over was not aborted";
  engine.join();
}

// The group takes the open's place: an abort reaches the group alone, and a
// rank outside every group of the scope (none set) leaves no open behind.
TEST(Progress, AGroupEndsTheOpenThatMadeIt) {
  ProgressBoard board;
  PollingOpen backend;
  backend.abort_ends_wait = false;
  CountingGroup group;
  {
    const OpeningBackend opening(&board, &backend);
    const ActiveGroup none(&board, nullptr);  // skip_open(): this rank is in no group
    board.abort_active_group();
    EXPECT_FALSE(backend.aborted) << "an open that has ended was aborted";
  }
  const OpeningBackend opening(&board, &backend);
  const ActiveGroup active(&board, &group);
  board.abort_active_group();
  EXPECT_EQ(group.aborts, 1);
  EXPECT_FALSE(backend.aborted);
}

}  // namespace
}  // namespace fb
