// core/ending_signals.hpp in-process: the newest subscription has SIGTERM,
// SIGINT and SIGHUP; when it goes the one before has them again; with none
// left the process's earlier handlers are back.
#include "fabricbench/core/ending_signals.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <atomic>
#include <optional>

namespace fb {
namespace {

std::atomic<int> g_earlier{0};
void earlier_handler(int signal) { g_earlier = signal; }

// Whether `s` has a byte to read within a second; poll, so a late handler still counts.
bool readable(const SignalSubscription& s) {
  pollfd p{s.fd(), POLLIN, 0};
  return ::poll(&p, 1, 1000) == 1;
}

class EndingSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    struct sigaction sa {};
    sa.sa_handler = earlier_handler;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &sa, &before_[s == SIGTERM ? 0 : s == SIGINT ? 1 : 2]);
    g_earlier = 0;
  }
  void TearDown() override {
    for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &before_[s == SIGTERM ? 0 : s == SIGINT ? 1 : 2], nullptr);
  }
  struct sigaction before_[3];
};

TEST_F(EndingSignals, TheNewestSubscriptionHasThemThenTheOneBeforeThenTheEarlierHandler) {
  std::optional<SignalSubscription> storage(std::in_place);
  ASSERT_GE(storage->fd(), 0);
  ::raise(SIGTERM);
  ASSERT_TRUE(readable(*storage));
  EXPECT_EQ(storage->take(), SIGTERM);
  {
    const SignalSubscription watchdog;
    ::raise(SIGHUP);
    ASSERT_TRUE(readable(watchdog));
    EXPECT_EQ(watchdog.take(), SIGHUP);
    EXPECT_EQ(storage->take(), 0) << "only the newest subscription has the signal";
  }
  ::raise(SIGINT);
  ASSERT_TRUE(readable(*storage));
  EXPECT_EQ(storage->take(), SIGINT);
  EXPECT_EQ(g_earlier, 0) << "the earlier handler saw nothing while subscribed";
  storage.reset();
  ::raise(SIGTERM);
  EXPECT_EQ(g_earlier, SIGTERM) << "with no subscription left, the earlier handler is back";
}

TEST_F(EndingSignals, AnOlderSubscriptionLeavingFirstKeepsTheNewestInCharge) {
  std::optional<SignalSubscription> older(std::in_place);
  const SignalSubscription newer;
  older.reset();
  ::raise(SIGTERM);
  ASSERT_TRUE(readable(newer));
  EXPECT_EQ(newer.take(), SIGTERM);
  EXPECT_EQ(g_earlier, 0);
}

TEST_F(EndingSignals, WakeIsAZeroByteThatIsNoSignal) {
  const SignalSubscription s;
  EXPECT_EQ(s.take(), 0) << "nothing came";
  s.wake();
  ASSERT_TRUE(readable(s));
  EXPECT_EQ(s.take(), 0);
}

}  // namespace
}  // namespace fb
