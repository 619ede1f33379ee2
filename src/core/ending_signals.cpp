// The signals that end a run, and their stack of subscriptions (core/ending_signals.hpp).
#include "fabricbench/core/ending_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <vector>

namespace fb {
namespace {

constexpr std::array kEndingSignals{SIGTERM, SIGINT, SIGHUP};

std::mutex g_mutex;
std::vector<int> g_stack;  // write ends, oldest first
struct sigaction g_previous[kEndingSignals.size()];
// The newest subscription's write end, for the handler; -1: none.
std::atomic<int> g_top{-1};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads g_top");

void on_signal(int signal) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  if (const int fd = g_top.load(); fd >= 0) {
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved;
}

void install_handlers() {
  for (std::size_t i = 0; i < kEndingSignals.size(); ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(kEndingSignals[i], &sa, &g_previous[i]);
  }
}

void restore_handlers() {
  for (std::size_t i = 0; i < kEndingSignals.size(); ++i) ::sigaction(kEndingSignals[i], &g_previous[i], nullptr);
}

}  // namespace

SignalSubscription::SignalSubscription() noexcept {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  std::lock_guard lock(g_mutex);
  g_stack.push_back(write_fd_);
  g_top = write_fd_;
  if (g_stack.size() == 1) install_handlers();
}

SignalSubscription::~SignalSubscription() {
  if (write_fd_ < 0) return;
  {
    std::lock_guard lock(g_mutex);
    g_stack.erase(std::find(g_stack.begin(), g_stack.end(), write_fd_));
    g_top = g_stack.empty() ? -1 : g_stack.back();
    if (g_stack.empty()) restore_handlers();
  }
  ::close(read_fd_);
  ::close(write_fd_);
}

int SignalSubscription::take() const {
  unsigned char sig = 0;
  return read_fd_ >= 0 && ::read(read_fd_, &sig, 1) == 1 ? sig : 0;
}

void SignalSubscription::wake() const {
  const unsigned char none = 0;
  if (write_fd_ >= 0) {
    [[maybe_unused]] const ssize_t n = ::write(write_fd_, &none, 1);
  }
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

}  // namespace fb
