// How a rank leaves an aborted run.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "fabricbench/core/clock.hpp"
#include "watchdog_impl.hpp"

namespace fb {
namespace {

// How long aborting the backend and flushing stdout may take before the
// process ends regardless.
constexpr auto kLeaveGrace = std::chrono::seconds(5);
// How long the engine's thread may take to abort its group (NCCL: it sees the
// flag at its next poll and calls ncclCommAbort): within kLeaveGrace.
constexpr double kAbortGraceS = 2;

// The group's abort runs on the engine's thread (nccl_comm.hpp): without this
// wait the process ended before that thread's next poll, and the
// communicator was never aborted through NCCL, only dropped by the exit.
void abort_group(ProgressBoard* board) {
  if (board) board->abort_active_group_and_wait(kAbortGraceS);
}

}  // namespace

double monotonic_s() { return now_us() * 1e-6; }

void abort_before_stopping_others(ProgressBoard* board) { abort_group(board); }

void leave_job(ProgressBoard* board, int exit_code) {
  // Whatever happens below, the process ends: an abort that blocks (a wedged
  // driver) or a stdout lock held by the stuck engine thread must not keep a
  // hung job alive.
  std::thread([exit_code] {
    std::this_thread::sleep_for(kLeaveGrace);
    ::_exit(exit_code);
  }).detach();
  abort_group(board);
  std::fflush(stdout);
  // _exit, not MPI_Abort: the engine's thread is blocked inside MPI, and
  // MPI_Abort from this thread (outside MPI_THREAD_FUNNELED) garbles Open
  // MPI 4.1's abort message ("ORTE_ERROR_LOG: ... show_help.c"). A rank that
  // exits non-zero before MPI_Finalize makes mpirun end the job with that
  // code; every other rank has been told to leave over the side channel
  // anyway, so srun without --kill-on-bad-exit ends too.
  ::_exit(exit_code);
}

void die_of_signal(ProgressBoard* board, int signal) {
  abort_group(board);
  die_of(signal);
}

namespace watch {

void Config::abort_group() const {
  if (side)
    side->abort_group();
  else if (board)
    board->abort_active_group();
}

void Config::abort_before_stopping_others() const {
  if (side)
    side->abort_before_stopping_others();
  else
    fb::abort_before_stopping_others(board);
}

void Config::leave_job(int exit_code) const {
  if (side) side->leave(exit_code);
  fb::leave_job(board, exit_code);
}

void Config::die_of_signal(int signal) const {
  if (side) side->die(signal);
  fb::die_of_signal(board, signal);
}

}  // namespace watch

}  // namespace fb
