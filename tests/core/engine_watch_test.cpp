// The engine's loop on threads of its own while the real watchdog threads
// read its progress board and abort its group, in one process without MPI:
// what scripts/sanitize.sh's ThreadSanitizer tree checks (the engine thread
// publishing each iteration, the watchdog thread reading the board, the
// abort reaching a group the engine is blocked in).
#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/timing.hpp"
#include "local_job.hpp"
#include "json_lines.hpp"

namespace fb::watch {
namespace {

using namespace std::chrono_literals;
using test::LocalJob;

constexpr int kRanks = 4;

// A collective among the engine threads: each iteration every rank arrives
// and waits for the others. One rank's local part hangs after it arrived at
// `hang_at` (a kernel that never ends), so the others issue the next
// iteration and wait on it there. abort() of a rank's group (from its
// watchdog's thread, as ncclCommAbort) makes its blocked call throw.
struct Collective {
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  long generation = 0;
  std::array<bool, kRanks> aborted{};
};

struct Aborted {};

class RankOp final : public PreparedOp {
 public:
  RankOp(Collective& c, int rank, long hang_at) : c_(c), rank_(rank), hang_at_(hang_at) {}
  void run() override {
    std::unique_lock lock(c_.mutex);
    const long generation = c_.generation;
    if (++c_.arrived == kRanks) {
      c_.arrived = 0;
      ++c_.generation;
      c_.cv.notify_all();
    } else {
      c_.cv.wait(lock, [&] { return c_.generation != generation || aborted(); });
    }
    if (generation == hang_at_) c_.cv.wait(lock, [&] { return aborted(); });
    if (aborted()) throw Aborted{};
  }
  void fill_check() override {}
  std::uint64_t count_wrong() override { return 0; }

 private:
  bool aborted() const { return c_.aborted[static_cast<std::size_t>(rank_)]; }
  Collective& c_;
  int rank_;
  long hang_at_;
};

class RankGroup final : public BackendGroup {
 public:
  RankGroup(Collective& c, int rank) : c_(c), rank_(rank) {}
  void reserve(std::uint64_t, std::uint64_t) override {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec&) override { return nullptr; }
  std::string path() const override { return "threads"; }
  void abort() override {
    std::lock_guard lock(c_.mutex);
    c_.aborted[static_cast<std::size_t>(rank_)] = true;
    c_.cv.notify_all();
  }

 private:
  Collective& c_;
  int rank_;
};

TEST(WatchEngine, AHangInsideTheEnginesLoopIsNamedAndEveryBlockedRankAborted) {
  constexpr double kTimeoutS = 1.0;
  constexpr int kStuckRank = 2;
  constexpr long kHangAt = 20;
  LocalJob job(kRanks, 2, kTimeoutS);
  job.start();
  Collective collective;
  std::array<std::atomic<bool>, kRanks> released{};
  std::vector<std::thread> engines;
  for (int r = 0; r < kRanks; ++r)
    engines.emplace_back([&, r] {
      ProgressBoard& board = job.board(r);
      RankOp op(collective, r, r == kStuckRank ? kHangAt : -1);
      RankGroup group(collective, r);
      OpSpec spec;
      spec.op = Op::all_reduce;
      spec.dtype = Dtype::float32;
      spec.layout = layout_for(spec.op, spec.dtype, 1 << 20, kRanks);
      const ActiveGroup active(&board, &group);
      label_op(&board, spec, op, 0);
      board.enter(Phase::timed);
      try {
        // More iterations than the hang lets through. Not a million: run_untimed zero-fills two
        // vectors of that many times per rank, 64 MB in all, which under TSan took longer than the
        // watchdog's 1 s here, so the hang was called before the first iteration.
        run_untimed(op, 10 * kHangAt, &board);
      } catch (const Aborted&) {
        released[static_cast<std::size_t>(r)] = true;
      }
    });
  const auto end = job.verdict(kTimeoutS + 10);
  // Each rank's watchdog aborts its group as it leaves; give them time, then
  // release by hand whatever is still blocked, so a missed abort fails the
  // test below instead of hanging it.
  const auto all_released = [&] {
    for (const auto& r : released)
      if (!r) return false;
    return true;
  };
  for (int i = 0; i < 500 && !all_released(); ++i) std::this_thread::sleep_for(20ms);
  std::array<bool, kRanks> by_watchdog{};
  for (int r = 0; r < kRanks; ++r) by_watchdog[static_cast<std::size_t>(r)] = released[static_cast<std::size_t>(r)];
  {
    std::lock_guard lock(collective.mutex);
    collective.aborted.fill(true);
    collective.cv.notify_all();
  }
  for (auto& e : engines) e.join();
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "hang") << end->message;
  EXPECT_EQ(end->report.get()["stuck_ranks"], std::vector<int>{kStuckRank}) << end->message;
  EXPECT_EQ(end->report.get()["waiting_ranks"].size(), static_cast<std::size_t>(kRanks - 1)) << end->message;
  // The stuck rank issued iteration kHangAt (counted from 0) and no more;
  // the others the next one.
  EXPECT_EQ(end->report.get()["stuck"][0]["iteration"], kHangAt + 1) << end->message;
  EXPECT_EQ(end->report.get()["stuck"][0]["op"], "all_reduce");
  for (int r = 0; r < kRanks; ++r) EXPECT_TRUE(by_watchdog[static_cast<std::size_t>(r)]) << "rank " << r;
}

TEST(WatchEngine, ARecordSealedFromTheWatchdogsThreadWhileTheEngineWritesEndsWithItsClosingLine) {
  // Rank 0's watchdog thread seals the record (a hang's summary) while the
  // engine's thread is still writing rows: every row is whole, the summary
  // is the last line, and the rows written after it are dropped.
  const auto dir = std::filesystem::temp_directory_path() / ("fb_engine_watch_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.jsonl").string();
  RecordWriter writer;
  ASSERT_EQ(writer.open(path, false), "");
  RunHeader header;
  header.command = "run";
  header.ranks = 1;
  header.run_id = "20261202T000000Z-0123456789abcdef";
  writer.write(header);
  std::atomic<long> written{0};
  std::atomic<bool> stop{false};
  std::thread engine([&] {
    Measurement m;
    m.op = "all_reduce";
    m.backend = "mpi";
    m.scope = "global";
    m.nranks = 1;
    for (std::uint64_t bytes = 8; !stop; bytes += 8) {
      m.bytes = bytes;
      writer.write(m);
      ++written;
    }
  });
  while (written < 200) std::this_thread::yield();
  Summary hang;
  hang.status = "hang";
  const bool sealed = writer.seal(hang);
  const long at_seal = written;
  while (written < at_seal + 200) std::this_thread::yield();  // rows the engine writes after the seal
  stop = true;
  engine.join();
  EXPECT_TRUE(sealed);
  EXPECT_EQ(writer.error(), "");
  const Results r = read_results(path);
  const auto last_line = fb::test::json_lines(path).back();
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(r.truncated) << r.truncated_note;
  EXPECT_EQ(r.status, "hang");
  EXPECT_EQ(last_line["type"], "summary");
  // The seal came after the 200th row and before the row counted after it
  // returned: the rows in the record lie between the two.
  EXPECT_GE(r.measurements.size(), 200u);
  EXPECT_LE(r.measurements.size(), static_cast<std::size_t>(at_seal) + 1);
}

}  // namespace
}  // namespace fb::watch
