// The watchdog's judgement on rank 0, from reported states alone.
#include "fabricbench/core/watch_report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fb::watch {
namespace {

// A rank in an op at (step, iteration), stalled for `stalled_s` of a `limit_s` limit.
RankView at(int rank, Phase phase, std::int64_t step, std::int64_t iteration, double stalled_s, double limit_s = 5) {
  RankView v;
  v.rank = rank;
  v.host = rank < 2 ? "node-a" : "node-b";
  v.reported = true;
  v.state.at.step = step;
  v.state.at.iteration = iteration;
  v.state.at.phase = phase;
  v.state.at.op = static_cast<int>(Op::all_reduce);
  v.state.at.scope = 0;
  v.state.at.bytes = 1 << 20;
  v.state.stalled_s = stalled_s;
  v.state.limit_s = limit_s;
  return v;
}

TEST(WatchReport, RankBehindIsStuckAndTheOthersWaitOnIt) {
  // Rank 2 issued 6 timed iterations; the others are in the 7th.
  const std::vector<RankView> ranks{at(0, Phase::timed, 40, 7, 5.2), at(1, Phase::timed, 40, 7, 5.1),
                                    at(2, Phase::timed, 40, 6, 5.3), at(3, Phase::timed, 40, 7, 5.0)};
  ASSERT_TRUE(hang_detected(ranks));
  const RunEnd end = hang_end(ranks, TimeoutPolicy{5});
  EXPECT_EQ(end.status, "hang");
  EXPECT_EQ(end.exit_code, 3);
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{2});
  EXPECT_EQ(end.report.get()["waiting_ranks"], (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(end.report.get()["stuck"][0]["host"], "node-b");
  EXPECT_EQ(end.report.get()["stuck"][0]["op"], "all_reduce");
  EXPECT_EQ(end.report.get()["stuck"][0]["iteration"], 6);
  EXPECT_NE(end.message.find("rank 2 (node-b): all_reduce global 1 MiB out-of-place, timed iteration 6"),
            std::string::npos)
      << end.message;
  EXPECT_NE(end.message.find("ranks 0,1,3 (node-a, node-b)"), std::string::npos) << end.message;
}

// Seen under mpirun on a loaded host: the stuck rank's last report was
// older than a waiting rank's, which crossed the limit first. The stuck rank
// stopped before the waiting one did, so it has been stalled at least as long.
TEST(WatchReport, StalledTimeOfTheStuckIsAtLeastThatOfRanksWaitingInTheOp) {
  const std::vector<RankView> ranks{at(0, Phase::timed, 40, 7, 5.0), at(1, Phase::timed, 40, 6, 4.8)};
  ASSERT_TRUE(hang_detected(ranks));
  const RunEnd end = hang_end(ranks, TimeoutPolicy{5});
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{1});
  EXPECT_GE(end.report.get()["stalled_s"].get<double>(), 5.0);
}

// fabricbench pairs: the resting rank has entered fewer steps than the pair
// measuring, but it waits in a control collective; the pair's rank that
// never issued its iteration is the stuck one.
TEST(WatchReport, ARankInAControlCollectiveIsNeverNamedWhileAnotherIsInAnOp) {
  const std::vector<RankView> ranks{at(0, Phase::sync, 1, 0, 3.2, 3), at(1, Phase::warmup, 19, 0, 3.1, 3),
                                    at(2, Phase::warmup, 19, 1, 3.1, 3)};
  ASSERT_TRUE(hang_detected(ranks));
  const RunEnd end = hang_end(ranks, TimeoutPolicy{3});
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{1});
  EXPECT_EQ(end.report.get()["waiting_ranks"], (std::vector<int>{0, 2}));
}

TEST(WatchReport, EveryRankInAControlCollectiveNamesTheFurthestBehind) {
  const std::vector<RankView> ranks{at(0, Phase::sync, 7, 0, 6), at(1, Phase::sync, 6, 0, 6)};
  ASSERT_TRUE(hang_detected(ranks));
  const RunEnd end = hang_end(ranks, TimeoutPolicy{5});
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{1});
  EXPECT_EQ(end.report.get()["waiting_ranks"], std::vector<int>{0});
}

TEST(WatchReport, EveryRankInALongComputeStretchIsNotAHang) {
  const std::vector<RankView> ranks{at(0, Phase::compute, 4, 0, 9), at(1, Phase::compute, 4, 0, 9)};
  EXPECT_FALSE(hang_detected(ranks));
  // A rank that waits in a call for one still computing past the limit is.
  const std::vector<RankView> waiting{at(0, Phase::timed, 5, 1, 9), at(1, Phase::compute, 4, 0, 9)};
  ASSERT_TRUE(hang_detected(waiting));
  EXPECT_EQ(hang_end(waiting, TimeoutPolicy{5}).report.get()["stuck_ranks"], std::vector<int>{1});
  // So is one computing past the limit while the others wait in a barrier.
  const std::vector<RankView> barrier{at(0, Phase::sync, 6, 0, 9), at(1, Phase::compute, 4, 0, 9)};
  ASSERT_TRUE(hang_detected(barrier));
  EXPECT_EQ(hang_end(barrier, TimeoutPolicy{5}).report.get()["stuck_ranks"], std::vector<int>{1});
}

TEST(WatchReport, EveryRankInTheSameOpMeansNoneIsBehind) {
  const std::vector<RankView> ranks{at(0, Phase::timed, 9, 3, 6), at(1, Phase::timed, 9, 3, 6)};
  ASSERT_TRUE(hang_detected(ranks));
  const RunEnd end = hang_end(ranks, TimeoutPolicy{5});
  EXPECT_EQ(end.report.get()["stuck_ranks"], (std::vector<int>{0, 1}));
  EXPECT_TRUE(end.report.get()["waiting_ranks"].empty());
  EXPECT_NE(end.message.find("none is behind"), std::string::npos) << end.message;
}

// SIGSTOP of rank 1 (issue 17): rank 1 issued iteration 8 and froze inside
// it; its last report, 5.2 s old, is ahead of rank 0, which waits in
// iteration 8 for it. Judged by position, rank 0 was "behind"; judged by
// silence, rank 1 is the one that stopped.
TEST(WatchReport, ARankThatStoppedAnsweringIsNamedNotTheRankWaitingOnIt) {
  auto frozen = at(1, Phase::timed, 40, 8, 0.1);
  frozen.age_s = 5.2;
  const std::vector<RankView> ranks{at(0, Phase::timed, 40, 7, 5.0), frozen};
  ASSERT_TRUE(hang_detected(ranks));
  const RunEnd end = hang_end(ranks, TimeoutPolicy{5});
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{1}) << end.message;
  EXPECT_EQ(end.report.get()["waiting_ranks"], std::vector<int>{0});
  EXPECT_NE(end.message.find("rank 1 stopped answering the watchdog 5.2 s ago"), std::string::npos) << end.message;
  EXPECT_GE(end.report.get()["stalled_s"].get<double>(), 5.0);
  // Frozen at the same point as the rank waiting on it: not "every rank at the same point".
  frozen.state.at.iteration = 7;
  const RunEnd same = hang_end({at(0, Phase::timed, 40, 7, 5.0), frozen}, TimeoutPolicy{5});
  EXPECT_EQ(same.report.get()["stuck_ranks"], std::vector<int>{1}) << same.message;
  EXPECT_EQ(same.message.find("every rank is at the same point"), std::string::npos) << same.message;
}

TEST(WatchReport, ThousandsWaitingNameAFewHostsAndCountTheRest) {
  std::vector<RankView> ranks;
  for (int r = 0; r < 64; ++r) {
    ranks.push_back(at(r, Phase::timed, 40, r == 37 ? 6 : 7, 5.5));
    ranks.back().host = "host-" + std::to_string(r / 4);
  }
  const RunEnd end = hang_end(ranks, TimeoutPolicy{5});
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{37});
  EXPECT_EQ(end.report.get()["waiting_ranks"].size(), 63u);
  EXPECT_NE(end.message.find("ranks 0-36,38-63 (host-0, host-1, host-2, host-3, host-4, host-5, host-6, host-7 and 8 "
                             "more hosts)"),
            std::string::npos)
      << end.message;
}

TEST(WatchReport, ReportsLateByLessThanHalfTheTimeoutAreNotSilence) {
  // A loaded host sends late: 1.2 s of a 5 s timeout is not a frozen rank.
  auto late = at(1, Phase::timed, 40, 7, 4.1);
  late.age_s = 1.2;
  const RunEnd end = hang_end({at(0, Phase::timed, 40, 6, 5.3), late}, TimeoutPolicy{5});
  EXPECT_EQ(end.report.get()["stuck_ranks"], std::vector<int>{0}) << end.message;
  EXPECT_DOUBLE_EQ(silent_after_s(TimeoutPolicy{5}), 2.5);
  EXPECT_DOUBLE_EQ(silent_after_s(TimeoutPolicy{1}), 1.0);  // never below four report periods
}

TEST(WatchReport, RanksLeftWaitingOnALostRankAreNotAllAtTheSamePoint) {
  auto lost = at(1, Phase::timed, 40, 7, 0.1);
  lost.lost = true;
  lost.lost_why = "silent for 5.1 s";
  const RunEnd end = hang_end({at(0, Phase::timed, 40, 7, 5.0), lost}, TimeoutPolicy{5});
  EXPECT_EQ(end.message.find("every rank is at the same point"), std::string::npos) << end.message;
  EXPECT_NE(end.message.find("waiting on the lost rank 1"), std::string::npos) << end.message;
}

TEST(WatchReport, WaitingInTheEngineIsNotAHangWhileSomeoneProgresses) {
  // Ranks 2 and 3 sit out a long point-to-point measurement: stalled in a
  // control collective for longer than the limit, but 0 and 1 progress.
  const std::vector<RankView> ranks{at(0, Phase::timed, 12, 900, 0.01), at(1, Phase::timed, 12, 901, 0.02),
                                    at(2, Phase::sync, 13, 0, 30), at(3, Phase::sync, 13, 0, 30)};
  EXPECT_FALSE(hang_detected(ranks));
}

TEST(WatchReport, EveryRankStalledOutsideAnOpIsAHang) {
  const std::vector<RankView> ranks{at(0, Phase::sync, 5, 0, 6), at(1, Phase::setup, 4, 0, 7)};
  ASSERT_TRUE(hang_detected(ranks));
  EXPECT_EQ(hang_end(ranks, TimeoutPolicy{5}).report.get()["stuck_ranks"], std::vector<int>{1});
}

TEST(WatchReport, BelowTheLimitOrFinishedOrLostIsNotAHang) {
  EXPECT_FALSE(hang_detected({at(0, Phase::timed, 1, 1, 4.9), at(1, Phase::timed, 1, 1, 4.9)}));
  auto done = at(1, Phase::timed, 1, 1, 60);
  done.finished = true;
  auto lost = at(2, Phase::timed, 1, 1, 60);
  lost.lost = true;
  EXPECT_FALSE(hang_detected({at(0, Phase::timed, 1, 1, 1), done, lost}));
  auto untimed = at(0, Phase::timed, 1, 1, 60, 0);  // limit 0: not watched
  EXPECT_FALSE(hang_detected({untimed}));
}

TEST(WatchReport, LostRankIsNamedWithItsHostAndWhereTheOthersAre) {
  auto lost = at(1, Phase::timed, 3, 2, 0.1);
  lost.lost = true;
  lost.lost_why = "its connection closed";
  lost.age_s = 0.4;
  const RunEnd end = lost_end({at(0, Phase::warmup, 7, 1, 0.2), lost});
  EXPECT_EQ(end.status, "rank_lost");
  EXPECT_EQ(end.report.get()["lost_ranks"], std::vector<int>{1});
  EXPECT_NE(end.message.find("rank 1 (node-a): its connection closed"), std::string::npos) << end.message;
  EXPECT_NE(end.message.find("warm-up iteration 1"), std::string::npos) << end.message;
}

TEST(WatchReport, ErrorAndSignalEndings) {
  const std::vector<RankView> ranks{at(0, Phase::sync, 1, 0, 0), at(1, Phase::timed, 1, 2, 0)};
  const RunEnd error = error_end(1, "MPI_Allreduce: MPI_ERR_TRUNCATE", ranks);
  EXPECT_EQ(error.status, "error");
  EXPECT_EQ(error.report.get()["host"], "node-a");
  EXPECT_NE(error.message.find("MPI_ERR_TRUNCATE"), std::string::npos);
  EXPECT_NE(error.message.find("timed iteration 2"), std::string::npos) << error.message;
  const RunEnd killed = killed_end(15, 1, ranks);
  EXPECT_EQ(killed.status, "killed");
  EXPECT_EQ(killed.report.get()["signal"], "SIGTERM");
  EXPECT_EQ(killed.exit_code, 128 + 15);
}

TEST(WatchReport, DescribeSaysWhetherTheIterationWasIssued) {
  ProgressSnapshot s;
  s.op = static_cast<int>(Op::all_gather);
  s.scope = 1;
  s.bytes = 16384;
  s.phase = Phase::warmup;
  EXPECT_EQ(describe(s), "all_gather intra 16 KiB out-of-place, before warm-up iteration 1");
  s.phase = Phase::timed;
  s.first_iteration = 20;
  s.iteration = 3;
  s.in_place = true;
  EXPECT_EQ(describe(s), "all_gather intra 16 KiB in-place, timed iteration 23");
  EXPECT_EQ(describe(ProgressSnapshot{}), "outside any measurement, outside the sweep");
}

TEST(WatchReport, RankListsAreCompact) {
  EXPECT_EQ(rank_list({3, 0, 1, 2, 7, 9, 10}), "0-3,7,9,10");
  EXPECT_EQ(rank_list({5}), "5");
  EXPECT_EQ(rank_list({}), "");
}

TEST(WatchReport, TimeoutPolicy) {
  const TimeoutPolicy automatic;
  EXPECT_DOUBLE_EQ(automatic.limit_s(0), kTimeoutFloorS);
  EXPECT_DOUBLE_EQ(automatic.limit_s(8'000'000'000), kTimeoutFloorS + 8);  // 8 GB at 1 GB/s
  EXPECT_DOUBLE_EQ(TimeoutPolicy{5}.limit_s(8'000'000'000), 5);
  EXPECT_FALSE(TimeoutPolicy{0}.enabled());
  EXPECT_DOUBLE_EQ(TimeoutPolicy{5}.silence_s(), 5);
  EXPECT_DOUBLE_EQ(automatic.silence_s(), kTimeoutFloorS);
}

}  // namespace
}  // namespace fb::watch
