// Signals, and how a rank leaves an aborted run.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "fabricbench/backends/backend.hpp"  // now_us
#include "watchdog_impl.hpp"

namespace fb {
namespace {

constexpr std::array kEndingSignals{SIGTERM, SIGINT, SIGHUP};
// How long aborting the backend and flushing stdout may take before the
// process ends regardless.
constexpr auto kLeaveGrace = std::chrono::seconds(5);

std::mutex g_pipe_mutex;
int g_users = 0;
// Read by the handler: set before the handlers are installed, cleared after they are gone.
int g_signal_pipe[2] = {-1, -1};
struct sigaction g_previous[kEndingSignals.size()];

void on_signal(int signal) {
  // Async-signal-safe: one write(); the watchdog's thread does the rest.
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t n = ::write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

double monotonic_s() { return now_us() * 1e-6; }

// Every watchdog loop of the process polls the same pipe (one, outside
// tests, which run several): the handlers stay until the last one goes.
int install_signal_pipe() {
  std::lock_guard lock(g_pipe_mutex);
  if (g_users++ > 0) return g_signal_pipe[0];
  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  for (std::size_t i = 0; i < kEndingSignals.size(); ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(kEndingSignals[i], &sa, &g_previous[i]);
  }
  return g_signal_pipe[0];
}

void uninstall_signal_pipe() {
  std::lock_guard lock(g_pipe_mutex);
  if (g_users == 0 || --g_users > 0 || g_signal_pipe[0] < 0) return;
  for (std::size_t i = 0; i < kEndingSignals.size(); ++i) ::sigaction(kEndingSignals[i], &g_previous[i], nullptr);
  ::close(g_signal_pipe[0]);
  ::close(g_signal_pipe[1]);
  g_signal_pipe[0] = g_signal_pipe[1] = -1;
}

void die_of(int signal) {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(signal, &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);  // not reached: the default action ends the process
}

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
