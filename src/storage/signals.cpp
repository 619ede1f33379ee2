#include "fabricbench/storage/signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/storage/workspace.hpp"

namespace fb::storage {
namespace {

constexpr std::array kSignals{SIGTERM, SIGINT, SIGHUP};
int g_pipe[2] = {-1, -1};
struct sigaction g_previous[kSignals.size()];

void on_signal(int signal) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
  errno = saved;
}

// The thread: waits for a signal's byte (or 0 = stop), cleans, dies of it.
void wait_for_signal() {
  while (true) {
    unsigned char sig = 0;
    const ssize_t n = ::read(g_pipe[0], &sig, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || sig == 0) return;
    clean_all_workspaces();
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
  }
}

// Not a data plane: the board's hook into the watchdog's ending (backend.hpp).
class CleanupOnAbort final : public BackendGroup {
 public:
  void reserve(std::uint64_t, std::uint64_t) override {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec&) override {
    throw RunError("storage's abort hook runs no ops");
  }
  std::string path() const override { return "storage"; }
  void abort() override { clean_all_workspaces(); }
};

}  // namespace

SignalCleanup::SignalCleanup() {
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) throw RunError("storage: cannot make the signal pipe");
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(kSignals[i], &sa, &g_previous[i]);
  }
  thread_ = std::thread(wait_for_signal);
}

SignalCleanup::~SignalCleanup() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
  const unsigned char stop = 0;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &stop, 1);
  thread_.join();
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

std::unique_ptr<BackendGroup> abort_hook() { return std::make_unique<CleanupOnAbort>(); }

}  // namespace fb::storage
