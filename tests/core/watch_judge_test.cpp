// Rank 0's knowledge of the ranks (judge.hpp) and the tree they report
// through (tree.hpp), driven by events and times alone.
#include <nlohmann/json.hpp>
#include <gtest/gtest.h>
#include <signal.h>

#include "judge.hpp"
#include "tree.hpp"

namespace fb::watch {
namespace {

// 16 ranks on 2 nodes of 8: node 1's leader is rank 8.
Tree two_nodes() {
  std::vector<int> rank_node(16);
  for (int r = 0; r < 16; ++r) rank_node[static_cast<std::size_t>(r)] = r / 8;
  return Tree(rank_node, {"node-a", "node-b"});
}

StateReport timed(std::int64_t iteration, double stalled_s, double limit_s = 5) {
  StateReport s;
  s.at.step = 3;
  s.at.iteration = iteration;
  s.at.phase = Phase::timed;
  s.at.op = static_cast<int>(Op::all_reduce);
  s.at.scope = 0;
  s.stalled_s = stalled_s;
  s.limit_s = limit_s;
  return s;
}

// Every rank but `skip` reports at `now` (leader-forwarded ranks with age 0.1).
void everyone_reports(Judge& j, const Tree& t, double now, std::int64_t iteration, double stalled_s, int skip = -1) {
  j.own(timed(iteration, stalled_s));
  for (int r = 1; r < t.size(); ++r)
    if (r != skip) j.state(r, timed(iteration, stalled_s), t.parent(r) > 0 ? 0.1 : 0, now);
}

TEST(WatchTree, LeadersReportToRankZeroTheOthersToTheirLeader) {
  const Tree t = two_nodes();
  EXPECT_EQ(t.parent(0), -1);
  EXPECT_EQ(t.parent(3), 0);   // node 0's leader is rank 0
  EXPECT_EQ(t.parent(8), 0);   // a leader
  EXPECT_EQ(t.parent(13), 8);  // on node 1
  EXPECT_EQ(t.children(0), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(t.children(8), (std::vector<int>{9, 10, 11, 12, 13, 14, 15}));
  EXPECT_TRUE(t.children(9).empty());
  EXPECT_TRUE(t.speaks_for(8, 15));   // a leader for its node's ranks
  EXPECT_FALSE(t.speaks_for(8, 3));   // not for another node's
  EXPECT_FALSE(t.speaks_for(9, 10));  // a rank only for itself
  EXPECT_FALSE(t.speaks_for(8, 16));
  EXPECT_EQ(t.host_of(12), "node-b");
  // Nodes in any order of ranks (round-robin placement): the lowest rank leads.
  const Tree rr({0, 1, 0, 1}, {"a", "b"});
  EXPECT_EQ(rr.leader_of_node(1), 1);
  EXPECT_EQ(rr.parent(3), 1);
  EXPECT_EQ(rr.children(0), (std::vector<int>{1, 2}));
}

TEST(WatchJudge, AFrozenRankBehindItsLeaderIsNamedAloneWithTheLeaderStillAnswering) {
  const Tree t = two_nodes();
  Judge j(t, TimeoutPolicy{5}, 0);
  for (double now = 0; now < 10.5; now += 0.25) {
    j.own(timed(1, now));
    for (int r = 1; r < 16; ++r)
      if (r != 13 || now < 4) j.state(r, timed(1, now), r > 8 ? 0.2 : 0, now);  // 13 froze at 4 s
    j.check_silence(now);
  }
  const auto end = j.verdict(10.5);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "rank_lost");
  EXPECT_EQ(end->report.get()["lost_ranks"], std::vector<int>{13}) << end->message;
  EXPECT_NE(end->message.find("its node leader, rank 8, still answers"), std::string::npos) << end->message;
}

TEST(WatchJudge, AFrozenLeaderTakesItsWholeNodeAndSaysSo) {
  const Tree t = two_nodes();
  Judge j(t, TimeoutPolicy{5}, 0);
  everyone_reports(j, t, 1, 4, 0.5);
  for (double now = 1; now < 6.5; now += 0.25) {
    for (int r = 1; r < 8; ++r) j.state(r, timed(4, now), 0, now);  // node 0 answers; node 1 is silent
    j.check_silence(now);
  }
  const auto end = j.verdict(6.75);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->report.get()["lost_ranks"], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15})) << end->message;
  EXPECT_NE(end->message.find("rank 9 (node-b): cut off: its node leader, rank 8, stopped answering"),
            std::string::npos)
      << end->message;
}

TEST(WatchJudge, ALeaderWhoseConnectionClosedLosesItsNode) {
  const Tree t = two_nodes();
  Judge j(t, TimeoutPolicy{5}, 0);
  everyone_reports(j, t, 1, 4, 0.5);
  j.bye(15);  // finished before: not lost
  j.link_lost(8, "its connection closed", 1.5);
  const auto end = j.verdict(1.8);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->report.get()["lost_ranks"], (std::vector<int>{8, 9, 10, 11, 12, 13, 14})) << end->message;
}

// A lost rank is why the others stop moving: while the ones lost with it
// may still come in, no hang is reported of the ranks left waiting on it.
TEST(WatchJudge, ALostRankIsReportedNotAHangOfTheRanksWaitingOnIt) {
  const Tree t({0, 0}, {"node-a"});
  Judge j(t, TimeoutPolicy{5}, 0);
  j.state(1, timed(7, 0.1), 0, 0.1);
  for (double now = 0.1; now < 5.2; now += 0.1) {
    j.own(timed(7, now));  // rank 0 waits inside the op for rank 1
    j.check_silence(now);
  }
  j.own(timed(7, 5.15));  // overdue, inside an op: a hang, were rank 1 not lost
  EXPECT_FALSE(j.verdict(5.2)) << "within the grace for others lost with it";
  const auto end = j.verdict(5.5);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "rank_lost");
  EXPECT_EQ(end->report.get()["lost_ranks"], std::vector<int>{1});
}

// A rank that receives a signal has its backend aborted at once (relay.cpp),
// so its run then fails with "communicator aborted" and says so: that failure
// is the signal's doing, and the record must say the signal ended the run.
TEST(WatchJudge, AFailureAfterASignalLeavesTheSignalAsTheCause) {
  const Tree t({0, 0, 0, 0}, {"node-a"});
  Judge j(t, TimeoutPolicy{5}, 0);
  j.signal(2, SIGTERM);
  j.fail(2, "waiting on NCCL: the run was ended (hang watchdog, lost rank or signal): NCCL communicator aborted");
  const auto end = j.verdict(0.1);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "killed") << end->message;
  EXPECT_EQ(end->exit_code, 128 + SIGTERM);
  EXPECT_EQ(end->report.get()["signal"], "SIGTERM");
  EXPECT_EQ(end->report.get()["rank"], 2);
}

// A failure before any signal stays the cause (mpirun sends SIGTERM to the
// other ranks once one has failed).
TEST(WatchJudge, AFailureBeforeASignalStaysTheCause) {
  const Tree t({0, 0, 0, 0}, {"node-a"});
  Judge j(t, TimeoutPolicy{5}, 0);
  j.fail(1, "injected error");
  j.signal(3, SIGTERM);
  const auto end = j.verdict(0.1);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "error");
  EXPECT_EQ(end->exit_code, 3);
}

// Issue 17: after a suspend of the whole job every rank had been silent for
// longer than the timeout, and rank 0 declared them lost.
TEST(WatchJudge, ASuspendedMonitorRestartsTheClocksAndBlamesNobody) {
  const Tree t = two_nodes();
  Judge j(t, TimeoutPolicy{3}, 0);
  everyone_reports(j, t, 1, 2, 0.1);
  j.restart_clocks(31);  // rank 0's own thread was gone for 30 s
  // Reports that waited out the same freeze, forwarded with their age.
  for (int r = 9; r < 16; ++r) j.state(r, timed(2, 0.1), 30, 31.05);
  for (double now = 31; now < 33.5; now += 0.25) {
    everyone_reports(j, t, now, 3, 0.1);
    j.check_silence(now);
  }
  EXPECT_FALSE(j.verdict(33.5));
  for (const auto& v : j.views()) EXPECT_FALSE(v.lost) << v.rank << ": " << v.lost_why;
}

// Issue 17: stalled_s read 60.9 against "silent for 30.5 s". A rank's stall
// is what it reported plus the time since it was heard, counted from when
// its report was read.
TEST(WatchJudge, TheStallOfASilentRankIsItsReportPlusItsSilence) {
  const Tree t({0, 0}, {"node-a"});
  Judge j(t, TimeoutPolicy{5}, 0);
  j.own(timed(2, 0));
  j.state(1, timed(2, 1.5), 0, 100.0);
  j.check_silence(105.2);
  const auto end = j.verdict(105.5);
  ASSERT_TRUE(end);
  const auto& lost = end->report.get()["lost"][0];
  EXPECT_NEAR(lost["stalled_s"].get<double>(), 1.5 + 5.2, 1e-9);
  EXPECT_NE(lost["lost"].get<std::string>().find("silent for 5.2 s"), std::string::npos) << lost.dump();
}

TEST(WatchJudge, EveryoneSaidByeIsDoneAndAHangAfterTheOwnSweepIsStillCaught) {
  const Tree t({0, 0, 0}, {"node-a"});
  Judge j(t, TimeoutPolicy{5}, 0);
  j.state(1, timed(1, 0.1), 0, 0.1);
  j.state(2, timed(1, 0.1), 0, 0.1);
  j.finishing();
  j.bye(1);
  EXPECT_FALSE(j.all_done());
  j.state(2, timed(1, 5.5), 0, 5.6);  // rank 2 never got out of its op
  const auto end = j.verdict(5.6);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->report.get()["stuck_ranks"], std::vector<int>{2});
  j.bye(2);
  EXPECT_TRUE(j.all_done());
}

}  // namespace
}  // namespace fb::watch
