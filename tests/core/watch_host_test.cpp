// The watch process (fabricbench/core/watch_host.hpp) outside any launcher:
// a forked stand-in for the rank starts it, and the test looks at the
// process from outside. What it does in a run (hangs, lost and frozen ranks,
// signals) the reliability suite covers end to end under mpirun.
#include "fabricbench/core/watch_host.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace fb {
namespace {

// A process's state letter (/proc/PID/stat), 0 when there is no such process.
char state_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  const auto paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

bool ended(pid_t pid) {
  const char s = state_of(pid);
  return s == 0 || s == 'Z' || s == 'X';
}

bool ends_within(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ended(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

struct StandIn {
  pid_t rank = -1;
  pid_t watch = -1;
};

// A forked "rank" that starts its watch process and says its pid; then it
// exits normally, or waits to be killed.
StandIn start_rank(bool exit_normally) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  const pid_t rank = ::fork();
  if (rank == 0) {
    ::close(out[0]);
    pid_t watch = WatchHost::start() ? WatchHost::get()->pid() : -1;
    [[maybe_unused]] const ssize_t n = ::write(out[1], &watch, sizeof(watch));
    ::close(out[1]);
    if (exit_normally) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::exit(0);  // static destructors: the host closes its socket and reaps its process
    }
    for (;;) ::pause();
  }
  ::close(out[1]);
  StandIn s;
  s.rank = rank;
  EXPECT_EQ(::read(out[0], &s.watch, sizeof(s.watch)), static_cast<ssize_t>(sizeof(s.watch)));
  ::close(out[0]);
  return s;
}

TEST(WatchHost, ItsProcessDiesWithAKilledRank) {
  const StandIn s = start_rank(false);
  ASSERT_GT(s.watch, 0) << "the watch process did not start";
  EXPECT_FALSE(ended(s.watch)) << "it runs while its rank does";
  ::kill(s.rank, SIGKILL);
  ::waitpid(s.rank, nullptr, 0);
  // Nothing told it: PR_SET_PDEATHSIG ends it, or it would hold the job's output pipes open.
  EXPECT_TRUE(ends_within(s.watch, std::chrono::seconds(5))) << "state " << state_of(s.watch);
}

TEST(WatchHost, ItsProcessEndsWithARankThatExits) {
  const StandIn s = start_rank(true);
  ASSERT_GT(s.watch, 0) << "the watch process did not start";
  int status = 0;
  ::waitpid(s.rank, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // Reaped by the rank on its way out: not even a zombie is left.
  EXPECT_EQ(state_of(s.watch), 0) << "state " << state_of(s.watch);
}

}  // namespace
}  // namespace fb
