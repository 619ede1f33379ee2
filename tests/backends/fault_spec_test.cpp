// Parsing --inject: what each fault strikes, and clear refusals.
#include <gtest/gtest.h>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/backends/fault.hpp"

namespace fb::fault {
namespace {

std::string refusal(const std::string& text) {
  try {
    parse_fault(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(FaultSpec, EveryKindAndSetting) {
  const Fault hang = parse_fault("hang:rank=2,op=all_reduce,bytes=1M");
  EXPECT_EQ(hang.kind, Kind::hang);
  EXPECT_EQ(hang.rank, 2);
  EXPECT_EQ(hang.op, Op::all_reduce);
  EXPECT_EQ(hang.bytes, 1u << 20);
  EXPECT_EQ(hang.after, 0);
  const Fault kill = parse_fault("kill:rank=3,after=5");
  EXPECT_EQ(kill.kind, Kind::kill);
  EXPECT_EQ(kill.after, 5);
  EXPECT_FALSE(kill.op);
  const Fault corrupt = parse_fault("corrupt:rank=1,count=4");
  EXPECT_EQ(corrupt.count, 4u);
  const Fault slow = parse_fault("slow:rank=1,factor=2.5");
  EXPECT_DOUBLE_EQ(slow.factor, 2.5);
  EXPECT_EQ(parse_fault("error:rank=0").kind, Kind::error);
  EXPECT_EQ(slow.text, "slow:rank=1,factor=2.5");
}

TEST(FaultSpec, RefusalsNameTheProblem) {
  EXPECT_NE(refusal("melt:rank=1").find("unknown kind 'melt'"), std::string::npos);
  EXPECT_NE(refusal("hang").find("rank= is required"), std::string::npos);
  EXPECT_NE(refusal("hang:rank=-1").find("rank=-1"), std::string::npos);
  EXPECT_NE(refusal("hang:rank=1,op=nope").find("op=nope"), std::string::npos);
  EXPECT_NE(refusal("hang:rank=1,bytes=1GB").find("ambiguous"), std::string::npos);
  EXPECT_NE(refusal("hang:rank=1,factor=3").find("'factor'"), std::string::npos);  // factor is for slow
  EXPECT_NE(refusal("slow:rank=1,factor=1").find("above 1"), std::string::npos);
  EXPECT_NE(refusal("corrupt:rank=1,count=0").find("count=0"), std::string::npos);
  EXPECT_NE(refusal("kill:rank=1,after").find("key=value"), std::string::npos);
  EXPECT_NE(refusal("kill:rank=99999999999").find("not a rank"), std::string::npos);
}

TEST(FaultSpec, AKeyGivenTwiceIsRefused) {
  // Before: "rank=1,rank=0" silently struck rank 0 only.
  const std::string why = refusal("hang:rank=1,rank=0");
  EXPECT_NE(why.find("'rank' is given twice"), std::string::npos) << why;
  EXPECT_NE(refusal("corrupt:rank=1,count=2,count=3").find("'count' is given twice"), std::string::npos);
}

}  // namespace
}  // namespace fb::fault
