// Slurm host lists, expanded as `scontrol show hostnames` does.
#include "fabricbench/core/hostlist.hpp"

#include <gtest/gtest.h>

#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand(std::string_view list) { return expand_hostlist(list, "--nodes"); }

std::string refusal(std::string_view list) {
  try {
    expand(list);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(HostList, PlainNamesRangesAndPadding) {
  EXPECT_EQ(expand("n1"), Hosts{"n1"});
  EXPECT_EQ(expand("n1,n2"), (Hosts{"n1", "n2"}));
  EXPECT_EQ(expand("gpu[01-03,20]"), (Hosts{"gpu01", "gpu02", "gpu03", "gpu20"}));
  EXPECT_EQ(expand("gpu[8-11]"), (Hosts{"gpu8", "gpu9", "gpu10", "gpu11"}));
  EXPECT_EQ(expand("gpu[098-101]"), (Hosts{"gpu098", "gpu099", "gpu100", "gpu101"}));
  EXPECT_EQ(expand("a[1-2],b7,c[3]"), (Hosts{"a1", "a2", "b7", "c3"}));
}

TEST(HostList, SeveralBracketGroupsMakeEveryCombination) {
  EXPECT_EQ(expand("r[1-2]n[1-2]-ib"), (Hosts{"r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib"}));
}

TEST(HostList, MalformedListsAreRefusedNamingTheList) {
  EXPECT_NE(refusal("gpu[01-03").find("'[' without ']'"), std::string::npos);
  EXPECT_NE(refusal("gpu01]").find("']' without '['"), std::string::npos);
  EXPECT_NE(refusal("gpu[03-01]").find("runs backwards"), std::string::npos);
  EXPECT_NE(refusal("gpu[a-b]").find("not a number"), std::string::npos);
  EXPECT_NE(refusal("n1,,n2").find("empty host name"), std::string::npos);
  EXPECT_NE(refusal("gpu[[1]]").find("inside brackets"), std::string::npos);
  EXPECT_NE(refusal("n[0-9999999]").find("million"), std::string::npos);
  EXPECT_NE(refusal("gpu[1-").find("--nodes 'gpu[1-'"), std::string::npos);
}

}  // namespace
}  // namespace fb
