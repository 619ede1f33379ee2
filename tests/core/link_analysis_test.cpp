// Findings and localisation of `fabricbench pairs` on synthetic matrices:
// all good, one bad node, one bad link, two bad nodes, and the edges.
#include <gtest/gtest.h>

#include <functional>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/link_analysis.hpp"
#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb {
namespace {

// A matrix whose link a-b runs at rate(a, b) GB/s each way, bidir twice that,
// with a deterministic +-3% ripple as on a real, healthy cluster.
LinkMatrix synthetic(int n, const std::function<double(int, int)>& rate) {
  LinkMatrix m(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const double ripple = 1.0 + 0.03 * (((a * 7 + b * 3) % 5) - 2) / 2.0;
      const double r = rate(a, b) * ripple;
      m.set(a, b, {r, r * 1.01, 2 * r * 0.98, 20.0 + a + b});
    }
  return m;
}

double healthy(int, int) { return 12.0; }

// Retests measured as the matrix says, except pairs that `override` rates.
LinkMatrix measure_retests(const Analysis& a, int n, const std::function<double(int, int)>& rate) {
  LinkMatrix r(n);
  for (const NodePair& p : retest_pairs(a)) {
    const double v = rate(p.a, p.b);
    r.set(p.a, p.b, {v, v, 2 * v, 20});
  }
  return r;
}

TEST(LinkAnalysis, AllGoodHasNoFindings) {
  const auto m = synthetic(8, healthy);
  const Analysis a = analyse(m, {});
  EXPECT_NEAR(a.refs.unidir_gbps, 12.0, 0.5);
  EXPECT_NEAR(a.refs.bidir_gbps, 24.0, 1.0);
  EXPECT_EQ(a.links.size(), 28u);
  for (const auto& l : a.links) EXPECT_FALSE(l.low) << l.pair.a << "-" << l.pair.b << " " << l.ratio;
  EXPECT_TRUE(a.suspect_nodes.empty());
  EXPECT_TRUE(a.suspect_links.empty());
  EXPECT_GE(a.reference_node, 0);
  EXPECT_TRUE(retest_pairs(a).empty());
  EXPECT_TRUE(localise(a, LinkMatrix(8)).empty());
}

TEST(LinkAnalysis, OneBadNodeIsLocalisedAndConfirmedAgainstAGoodNode) {
  auto rate = [](int x, int y) { return (x == 5 || y == 5) ? 3.0 : 12.0; };
  const auto m = synthetic(8, rate);
  const Analysis a = analyse(m, {});
  EXPECT_NEAR(a.refs.unidir_gbps, 12.0, 0.5);  // the bad node does not drag the reference
  EXPECT_EQ(a.suspect_nodes, std::vector<int>{5});
  EXPECT_TRUE(a.suspect_links.empty());  // its links are explained by the node
  ASSERT_GE(a.reference_node, 0);
  EXPECT_NE(a.reference_node, 5);
  ASSERT_EQ(retest_pairs(a), (std::vector<NodePair>{{5, a.reference_node}}));

  const auto findings = localise(a, measure_retests(a, 8, rate));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, Finding::Kind::node);
  EXPECT_EQ(findings[0].node, 5);
  EXPECT_EQ(findings[0].low_links, 7);
  EXPECT_EQ(findings[0].links, 7);
  EXPECT_NEAR(findings[0].ratio, 0.25, 0.02);
  EXPECT_TRUE(findings[0].confirmed);
  EXPECT_FALSE(findings[0].intermittent());
}

TEST(LinkAnalysis, ABadNodeNormalOnRetestIsIntermittent) {
  const auto m = synthetic(6, [](int x, int y) { return (x == 2 || y == 2) ? 3.0 : 12.0; });
  const Analysis a = analyse(m, {});
  const auto findings = localise(a, measure_retests(a, 6, healthy));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].node, 2);
  EXPECT_FALSE(findings[0].confirmed);
  EXPECT_TRUE(findings[0].intermittent());
  EXPECT_NEAR(findings[0].retest_ratio, 1.0, 0.05);
}

TEST(LinkAnalysis, OneBadLinkIsTheLinkWhenBothEndsAreFineElsewhere) {
  auto rate = [](int x, int y) { return (x == 2 && y == 6) || (x == 6 && y == 2) ? 6.0 : 12.0; };
  const auto m = synthetic(8, rate);
  const Analysis a = analyse(m, {});
  EXPECT_TRUE(a.suspect_nodes.empty());
  ASSERT_EQ(a.suspect_links, (std::vector<NodePair>{{2, 6}}));
  const int r = a.reference_node;
  ASSERT_GE(r, 0);
  EXPECT_NE(r, 2);
  EXPECT_NE(r, 6);
  EXPECT_EQ(retest_pairs(a), (std::vector<NodePair>{{2, r}, {6, r}, {2, 6}}));

  const auto findings = localise(a, measure_retests(a, 8, rate));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, Finding::Kind::link);
  EXPECT_EQ(findings[0].link, (NodePair{2, 6}));
  EXPECT_NEAR(findings[0].ratio, 0.5, 0.03);
  EXPECT_TRUE(findings[0].confirmed);
}

TEST(LinkAnalysis, ALowLinkWhoseEndIsLowAgainstTheReferenceBlamesThatNode) {
  const auto m = synthetic(8, [](int x, int y) { return (x == 2 && y == 6) ? 6.0 : 12.0; });
  const Analysis a = analyse(m, {});
  // Node 6 turns out slow against the reference node as well.
  const auto findings = localise(a, measure_retests(a, 8, [](int x, int y) { return x == 6 || y == 6 ? 5.0 : 12.0; }));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, Finding::Kind::node);
  EXPECT_EQ(findings[0].node, 6);
  EXPECT_EQ(findings[0].link, (NodePair{2, 6}));
  EXPECT_TRUE(findings[0].confirmed);
}

TEST(LinkAnalysis, TwoBadNodesAreBothFoundAndTheirSharedLinkIsNotASeparateFinding) {
  auto rate = [](int x, int y) { return (x == 1 || y == 1 || x == 6 || y == 6) ? 4.0 : 12.0; };
  const auto m = synthetic(8, rate);
  const Analysis a = analyse(m, {});
  EXPECT_NEAR(a.refs.unidir_gbps, 12.0, 0.5);
  EXPECT_EQ(a.suspect_nodes, (std::vector<int>{1, 6}));
  EXPECT_TRUE(a.suspect_links.empty());
  for (const auto& s : a.nodes) {
    if (s.node != 1 && s.node != 6) {
      EXPECT_EQ(s.low_links, 2) << s.node;  // one to each bad node
    }
  }
  const auto findings = localise(a, measure_retests(a, 8, rate));
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].node, 1);
  EXPECT_EQ(findings[1].node, 6);
  for (const auto& f : findings) EXPECT_TRUE(f.confirmed);
}

TEST(LinkAnalysis, ALowLinkToABadNodeDoesNotCountAgainstAGoodNode) {
  // Six nodes, node 2 bad; node 0 also measured low to nodes 1 and 3 once.
  // Node 0 has 3 of 5 links low, but one of them is explained by node 2.
  auto rate = [](int x, int y) {
    if (x == 2 || y == 2) return 3.0;
    return (x == 0 && (y == 1 || y == 3)) ? 7.2 : 12.0;
  };
  const Analysis a = analyse(synthetic(6, rate), {});
  EXPECT_NEAR(a.refs.unidir_gbps, 12.0, 0.5);
  EXPECT_EQ(a.nodes[0].low_links, 3);
  EXPECT_FALSE(a.nodes[0].suspect);
  EXPECT_EQ(a.suspect_nodes, std::vector<int>{2});
  EXPECT_EQ(a.suspect_links, (std::vector<NodePair>{{0, 1}, {0, 3}}));
  EXPECT_TRUE(a.reference_node == 4 || a.reference_node == 5) << a.reference_node;
  // Normal when measured again: the links are warnings, the node the finding.
  const auto findings = localise(a, measure_retests(a, 6, [](int x, int y) { return x == 2 || y == 2 ? 3.0 : 12.0; }));
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].node, 2);
  EXPECT_TRUE(findings[0].confirmed);
  for (std::size_t i : {1u, 2u}) {
    EXPECT_EQ(findings[i].kind, Finding::Kind::link);
    EXPECT_TRUE(findings[i].intermittent());
  }
}

TEST(LinkAnalysis, TwoBadNodesOfFourAreBeyondAMedianReference) {
  // Half the nodes bad: the median is the bad rate, so nothing stands out.
  // --expect-gbps is the way out, and then both are found.
  auto rate = [](int x, int y) { return (x <= 1 || y <= 1) ? 3.0 : 12.0; };
  EXPECT_TRUE(analyse(synthetic(4, rate), {}).suspect_nodes.empty());
  const Analysis a = analyse(synthetic(4, rate), {0.9, 12.0});
  EXPECT_EQ(a.suspect_nodes, (std::vector<int>{0, 1}));
  EXPECT_GE(a.reference_node, 2);
}

TEST(LinkAnalysis, ThreeNodesWithOneBadStillFindIt) {
  // Each good node has one good and one bad link: the upper median keeps its rate.
  auto rate = [](int x, int y) { return (x == 0 || y == 0) ? 4.0 : 12.0; };
  const Analysis a = analyse(synthetic(3, rate), {});
  EXPECT_NEAR(a.refs.unidir_gbps, 12.0, 0.6);
  EXPECT_EQ(a.suspect_nodes, std::vector<int>{0});
  EXPECT_GE(a.reference_node, 1);
  const auto findings = localise(a, measure_retests(a, 3, rate));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].node, 0);
  EXPECT_TRUE(findings[0].confirmed);
}

TEST(LinkAnalysis, OneBadDirectionMakesTheLinkLow) {
  LinkMatrix m = synthetic(6, healthy);
  m.set(4, 1, {2.0, 12.0, 14.0, 20});  // 4 -> 1 crawls, 1 -> 4 is fine
  const Analysis a = analyse(m, {});
  ASSERT_EQ(a.suspect_links, (std::vector<NodePair>{{1, 4}}));
  for (const auto& l : a.links) {
    if (l.pair == NodePair{1, 4}) {
      EXPECT_EQ(l.worst, "unidir b->a");
    }
  }
}

TEST(LinkAnalysis, TwoNodesBelowTheExpectedRateCannotBeToldApart) {
  LinkMatrix m(2);
  m.set(0, 1, {5.0, 5.0, 10.0, 3.0});
  const Analysis fine = analyse(m, {});
  EXPECT_TRUE(fine.suspect_links.empty());
  const Analysis a = analyse(m, {0.9, 12.5});
  EXPECT_TRUE(a.refs.expected);
  EXPECT_DOUBLE_EQ(a.refs.unidir_gbps, 12.5);
  EXPECT_TRUE(a.suspect_nodes.empty());  // one link each: no majority to blame a node
  EXPECT_EQ(a.reference_node, -1);
  EXPECT_TRUE(retest_pairs(a).empty());
  const auto findings = localise(a, LinkMatrix(2));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, Finding::Kind::link);
  EXPECT_EQ(findings[0].retested_against, -1);
  EXPECT_FALSE(findings[0].intermittent());  // not cleared: it fails the run
}

// A lone link has nothing to be held against but itself: its faster
// direction made the reference, and a healthy shared-memory pair's other
// direction, 20% slower in one launch of two, was a low link and exit 1.
TEST(LinkAnalysis, ALoneLinkIsJudgedOnlyAgainstTheExpectedRate) {
  LinkMatrix m(2);
  m.set(0, 1, {10.3, 8.17, 15.7, 0.5});
  const Analysis a = analyse(m, {});
  EXPECT_TRUE(a.refs.lone_link);
  EXPECT_EQ(a.refs.unidir_gbps, 0);
  ASSERT_EQ(a.links.size(), 1u);
  EXPECT_FALSE(a.links[0].low);
  EXPECT_TRUE(a.suspect_links.empty());
  EXPECT_EQ(a.reference_node, -1) << "no third node to retest against";
  const Analysis expected = analyse(m, {0.9, 10.0});
  EXPECT_FALSE(expected.refs.lone_link);
  ASSERT_EQ(expected.links.size(), 1u);
  EXPECT_TRUE(expected.links[0].low) << "8.17 GB/s against 10 expected";
  // Two links (three nodes, one missing) have a reference of their own.
  LinkMatrix three(3);
  three.set(0, 1, {10.0, 10.0, 20.0, 0.5});
  three.set(0, 2, {10.0, 10.0, 20.0, 0.5});
  EXPECT_FALSE(analyse(three, {}).refs.lone_link);
  EXPECT_GT(analyse(three, {}).refs.unidir_gbps, 0);
}

TEST(LinkAnalysis, ThresholdZeroFlagsNothing) {
  const Analysis a = analyse(synthetic(6, [](int x, int y) { return x == 0 || y == 0 ? 1.0 : 12.0; }), {0.0, 0});
  EXPECT_TRUE(a.suspect_nodes.empty());
  EXPECT_TRUE(a.suspect_links.empty());
}

TEST(LinkMatrix, KeepsDirectionsWhicheverWayItIsSet) {
  LinkMatrix m(4);
  m.set(3, 1, {1.0, 2.0, 3.0, 4.0});  // 3 sends 1 GB/s to 1, 1 sends 2 to 3
  ASSERT_TRUE(m.get(1, 3));
  EXPECT_DOUBLE_EQ(m.get(1, 3)->unidir_ab_gbps, 2.0);
  EXPECT_DOUBLE_EQ(m.get(3, 1)->unidir_ab_gbps, 1.0);
  EXPECT_FALSE(m.get(0, 1));
  EXPECT_FALSE(m.get(2, 2));
  EXPECT_FALSE(m.get(0, 9));
}

TEST(UpperMedian, TakesTheUpperMiddleForEvenCounts) {
  EXPECT_DOUBLE_EQ(upper_median({}), 0);
  EXPECT_DOUBLE_EQ(upper_median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(upper_median({4, 1, 3, 2}), 3);
}

TEST(SelectNodes, HostNamesIndicesAndRangesInNodeOrder) {
  const std::vector<std::string> hosts{"a1", "a2", "b1", "b2", "7"};
  EXPECT_EQ(select_nodes({"b1", "a1"}, hosts), (std::vector<int>{0, 2}));
  EXPECT_EQ(select_nodes({"1-3", "0", "a2"}, hosts), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(select_nodes({"7"}, hosts), std::vector<int>{4});  // a host name wins over an index
  EXPECT_THROW(select_nodes({"c9"}, hosts), UsageError);
  EXPECT_THROW(select_nodes({"3-9"}, hosts), UsageError);
  EXPECT_THROW(select_nodes({"3-1"}, hosts), UsageError);
  try {
    select_nodes({"nope"}, hosts);
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a1 (0)"), std::string::npos) << e.what();
  }
}

TEST(SelectNodes, SlurmHostListsAsOneFlagValue) {
  // One --nodes value as squeue prints it: the commas inside brackets are ranges, outside they separate items.
  const std::vector<std::string> hosts{"gpu01", "gpu02", "gpu03", "gpu16", "gpu20", "cpu1"};
  EXPECT_EQ(select_nodes({"gpu[01-02,20]"}, hosts), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(select_nodes({"gpu[03,16],5"}, hosts), (std::vector<int>{2, 3, 5}));
  EXPECT_THROW(select_nodes({"gpu[01-04]"}, hosts), UsageError);  // gpu04 is not in the job
}

}  // namespace
}  // namespace fb
