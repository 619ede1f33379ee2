// One rate parser for every input a person types: a quote, a preset and an
// acceptance rule read the same text as the same rate (issue 23: the model
// read "400Gbps" as bits while rules refused it).
#include "fabricbench/core/units.hpp"

#include <gtest/gtest.h>

#include "fabricbench/accept/rule.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/units.hpp"

namespace fb {
namespace {

TEST(Units, BitsAndBytesPerSecondInGBps) {
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400Gbps", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400 Gb/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400 Gbit/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400G", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("10GbE", "x"), 1.25);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("50 GB/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("50 GBps", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("125 MB/s", "x"), 0.125);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("1 Tbit/s", "x"), 125.0);
}

TEST(Units, CaseDecidesBitsOrBytesAndAmbiguityIsRefused) {
  for (const char* unit : {"gb/s", "gbps", "GBPS", "gbit/s"}) {
    EXPECT_FALSE(rate_unit_gbps(unit)) << unit;
    EXPECT_NE(rate_unit_problem(unit).find("ambiguous"), std::string::npos) << unit;
  }
  EXPECT_NE(rate_unit_problem("GB").find("a size, not a rate"), std::string::npos);
  EXPECT_NE(rate_unit_problem("").find("no unit"), std::string::npos);
  EXPECT_THROW(parse_rate_gbps("400", "x"), UsageError);
}

// The same text, the same rate, whoever reads it.
TEST(Units, ModelAndRulesReadARateAlike) {
  for (const char* text : {"400Gbps", "400 Gb/s", "400 Gbit/s", "400G", "50 GB/s", "50 GBps", "10GbE", "25 GiB/s"}) {
    const double model_gbps = model::parse_rate_gbps(text, "quote");
    const accept::Limit rule = accept::parse_limit(text, accept::Bound::min, "rule");
    EXPECT_EQ(rule.dimension, accept::Dimension::bandwidth) << text;
    EXPECT_DOUBLE_EQ(rule.value, model_gbps) << text;
  }
  for (const char* text : {"400 gbps", "400 gb/s", "50GB"}) {
    EXPECT_THROW(model::parse_rate_gbps(text, "quote"), UsageError) << text;
    EXPECT_THROW(accept::parse_limit(text, accept::Bound::min, "rule"), UsageError) << text;
  }
}

TEST(Units, LineRatesArePrintedInGbitPerSecond) {
  EXPECT_EQ(format_line_rate(1.25), "10 Gbit/s");
  EXPECT_EQ(format_line_rate(400), "3200 Gbit/s");
}

}  // namespace
}  // namespace fb
