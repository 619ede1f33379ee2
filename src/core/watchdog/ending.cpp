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

}  // namespace

double monotonic_s() { return now_us() * 1e-6; }

void leave_job(ProgressBoard* board, int exit_code) {
  // Whatever happens below, the process ends: an abort that blocks (a wedged
  // driver) or a stdout lock held by the stuck engine thread must not keep a
  // hung job alive.
  std::thread([exit_code] {
    std::this_thread::sleep_for(kLeaveGrace);
    ::_exit(exit_code);
  }).detach();
  if (board) board->abort_active_group();
  std::fflush(stdout);
  // _exit, not MPI_Abort: the engine's thread is blocked inside MPI, and
  // MPI_Abort from this thread (outside MPI_THREAD_FUNNELED) garbles Open
  // MPI 4.1's abort message ("ORTE_ERROR_LOG: ... show_help.c"). A rank that
  // exits non-zero before MPI_Finalize makes mpirun end the job with that
  // code; every other rank has been told to leave over the side channel
  // anyway, so srun without --kill-on-bad-exit ends too.
  ::_exit(exit_code);
}

}  // namespace fb
