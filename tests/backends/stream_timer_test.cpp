// StreamTimer, the GPU backends' event timing, on the host double of its
// device queue (tests/support/sim_queue.hpp): how often queued and captured
// work runs, and how event times become iteration times.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cuda_common/stream_timer.hpp"
#include "sim_queue.hpp"

namespace fb {
namespace {

struct Timed {
  std::vector<double> start, duration;
  std::size_t together = 0;
  std::atomic<std::int64_t> issued{0};
  explicit Timed(std::size_t n) : start(n, -1), duration(n, -1) {}
  IterationTimes times(double agreed_us) { return {start, duration, &issued, agreed_us, &together}; }
};

class StreamTimerTest : public ::testing::Test {
 protected:
  StreamTimerTest() {
    auto q = std::make_unique<test::SimQueue>();
    sim = q.get();
    timer = std::make_unique<gpu::StreamTimer>(std::move(q));
  }
  test::SimQueue* sim;
  std::unique_ptr<gpu::StreamTimer> timer;
};

TEST_F(StreamTimerTest, AGraphRunsTheWorkOncePerIterationAskedFor) {
  // Issue 34, defect 1: capture replayed the graph once untimed, so the
  // check's single in-place iteration (a fresh capture of 1) reduced twice.
  int reduced = 0;
  const auto add_one = [&] { sim->enqueue(10, [&] { ++reduced; }); };
  Timed one(1);
  timer->time_graph(one.times(0), add_one);
  EXPECT_EQ(reduced, 1);
  EXPECT_EQ(sim->uploads, 1);
  Timed five(5);
  timer->time_graph(five.times(0), add_one);  // a new count: captured again
  timer->time_graph(five.times(0), add_one);  // the same count: replayed
  EXPECT_EQ(reduced, 1 + 5 + 5);
  EXPECT_EQ(sim->captures, 2);
  EXPECT_EQ(sim->launches, 3);
}

TEST_F(StreamTimerTest, AGraphBatchIsOneTimingOfItsMean) {
  const std::vector<double> cost{10, 20, 30, 40};
  std::size_t k = 0;
  Timed t(4);
  timer->time_graph(t.times(0), [&] { sim->enqueue(cost[k++ % 4], [] {}); });
  EXPECT_EQ(t.together, 4u);
  EXPECT_EQ(t.issued.load(), 4);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(t.duration[i], 25.0) << i;
  EXPECT_DOUBLE_EQ(t.start[3] - t.start[0], 75.0);
}

TEST_F(StreamTimerTest, ShortIterationsAreTimedInGroupsOfTheirMean) {
  // Agreed 10 us per iteration: groups of 5 span the 50 us an event needs.
  std::vector<double> cost;
  for (int i = 0; i < 12; ++i) cost.push_back(i < 5 ? 8.0 : i < 10 ? 12.0 : 20.0);
  std::size_t k = 0;
  int ran = 0;
  Timed t(12);
  timer->time_queued(t.times(10.0), [&] { sim->enqueue(cost[k++], [&] { ++ran; }); });
  EXPECT_EQ(ran, 12);
  EXPECT_EQ(t.together, 5u);
  EXPECT_EQ(t.issued.load(), 12);
  EXPECT_EQ(sim->waits, 3);  // one per group: the watchdog sees progress group by group
  for (std::size_t i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(t.duration[i], 8.0);
  for (std::size_t i = 5; i < 10; ++i) EXPECT_DOUBLE_EQ(t.duration[i], 12.0);
  EXPECT_DOUBLE_EQ(t.duration[10], 20.0);  // the last group holds the 2 left
  EXPECT_DOUBLE_EQ(t.start[11] - t.start[0], 5 * 8.0 + 5 * 12.0 + 20.0);
}

TEST_F(StreamTimerTest, LongIterationsAreEachTimedAlone) {
  const std::vector<double> cost{100, 300, 200};
  std::size_t k = 0;
  Timed t(3);
  timer->time_queued(t.times(0), [&] { sim->enqueue(cost[k++], [] {}); });
  EXPECT_EQ(t.together, 1u);
  EXPECT_EQ(t.duration, cost);
}

TEST_F(StreamTimerTest, AFailedCaptureKeepsNoGraph) {
  int calls = 0;
  const auto fails_second = [&] {
    if (++calls == 2) throw std::runtime_error("ncclAllReduce failed");
    sim->enqueue(1, [] {});
  };
  Timed t(3);
  EXPECT_THROW(timer->time_graph(t.times(0), fails_second), std::runtime_error);
  EXPECT_EQ(sim->launches, 0);
  EXPECT_EQ(sim->uploads, 0);
  // The same count again captures again rather than replaying nothing.
  timer->time_graph(t.times(0), [&] { sim->enqueue(1, [] {}); });
  EXPECT_EQ(sim->captures, 2);
  EXPECT_EQ(sim->runs, 3);
}

TEST_F(StreamTimerTest, ADroppedGraphIsCapturedAgain) {
  Timed t(2);
  timer->time_graph(t.times(0), [&] { sim->enqueue(1, [] {}); });
  timer->drop_graph();  // what an NCCL abort does first
  timer->time_graph(t.times(0), [&] { sim->enqueue(1, [] {}); });
  EXPECT_EQ(sim->captures, 2);
  EXPECT_EQ(sim->runs, 4);
}

}  // namespace
}  // namespace fb
