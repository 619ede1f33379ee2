// The text report of `fabricbench pairs`: square matrices that read by row
// and column, and the node table, on three healthy nodes of uneven names.
#include <gtest/gtest.h>

#include "fabricbench/core/link_analysis.hpp"
#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/pairs_report.hpp"

namespace fb {
namespace {

std::string three_node_report() {
  LinkMatrix m(3);
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b) m.set(a, b, {12.0, 12.0, 24.0, 20.0});
  PairsResult r;
  r.nodes = {0, 1, 2};
  r.matrices = {m};
  r.analyses = {analyse(m, {})};
  r.findings = {{}};
  PairsLabels l;
  l.nodes = {0, 1, 2};
  l.hosts = {"a", "node-two", "n3"};
  return format_report(r, l);
}

TEST(PairsReport, TheMatrixIsSquareAtTheLongestHostName) {
  const std::string out = three_node_report();
  EXPECT_EQ(out.substr(0, out.find("\n\n") + 1),
            "unidir GB/s, row sends to column (* = low link)\n"
            "                 a  node-two        n3\n"
            "a                -      12.0      12.0\n"
            "node-two      12.0         -      12.0\n"
            "n3            12.0      12.0         -\n");
}

TEST(PairsReport, TheNodeTableHasOneRowPerNodeUnderItsHead) {
  const std::string out = three_node_report();
  const auto head = out.find("node                 links  low  unidir med  unidir min   bidir med  latency us\n");
  ASSERT_NE(head, std::string::npos) << out;
  EXPECT_NE(out.find("\nnode-two                 2    0        12.0        12.0        24.0        20.0", head),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("reference for retests\n", head), std::string::npos) << out;
}

// A link low in one direction only: the star marks the figure that is low,
// not every figure of the link (the other direction and bidir are at the
// reference and a reader would look for a fault there).
TEST(PairsReport, OnlyTheFigureBelowTheReferenceIsStarred) {
  LinkMatrix m(3);
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b) m.set(a, b, {12.0, 12.0, 24.0, 20.0});
  m.set(0, 1, {4.0, 12.0, 24.0, 20.0});  // a sends to node-two at a third of the rest
  PairsResult r;
  r.nodes = {0, 1, 2};
  r.matrices = {m};
  r.analyses = {analyse(m, {})};
  r.findings = {{}};
  ASSERT_TRUE(r.analyses[0].links[0].low);
  PairsLabels l;
  l.nodes = {0, 1, 2};
  l.hosts = {"a", "node-two", "n3"};
  const std::string out = format_report(r, l);
  EXPECT_NE(out.find("a                -     4.00*      12.0\n"
                     "node-two      12.0         -      12.0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("a                -      24.0      24.0\n"), std::string::npos) << out;  // bidir: no star
}

// Two nodes: one link. Without --expect-gbps nothing to hold it against,
// and the report says so instead of a reference made of the link itself;
// with it, a low link is the pair's fault, neither end named.
TEST(PairsReport, TwoNodesSayTheirLinkHasNoReferenceAndBlameThePair) {
  LinkMatrix m(2);
  m.set(0, 1, {10.3, 8.17, 15.7, 0.5});
  PairsResult r;
  r.nodes = {0, 1};
  r.matrices = {m};
  r.analyses = {analyse(m, {})};
  r.findings = {localise(r.analyses[0], LinkMatrix(2))};
  PairsLabels l;
  l.nodes = {0, 1};
  l.hosts = {"vm/0", "vm/1"};
  std::string out = format_report(r, l);
  EXPECT_NE(out.find("reference: none for bandwidth: one link, nothing to hold it against (--expect-gbps G judges it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("findings: none"), std::string::npos) << out;
  EXPECT_EQ(out.find("8.17*"), std::string::npos) << out;
  EXPECT_EQ(out.find("reference for retests"), std::string::npos) << out;

  r.analyses = {analyse(m, {0.9, 10.0})};
  r.findings = {localise(r.analyses[0], LinkMatrix(2))};
  ASSERT_EQ(r.findings[0].size(), 1u);
  out = format_report(r, l);
  EXPECT_NE(out.find("link vm/0 - vm/1: 0.78 of the reference (bidir); the pair is at fault: with two nodes nothing "
                     "can tell which end"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace fb
