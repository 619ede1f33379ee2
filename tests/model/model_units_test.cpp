// Units in the model's inputs: the common spellings are accepted, the
// ambiguous ones rejected with the spellings that are not.
#include "fabricbench/model/units.hpp"

#include <gtest/gtest.h>

#include "fabricbench/core/errors.hpp"

namespace fb::model {
namespace {

TEST(Units, RatesInBitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400G", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400 Gb/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400Gbps", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("400 Gbit/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("10GbE", "x"), 1.25);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("50 GB/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("50GBps", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("800 Mb/s", "x"), 0.1);
  EXPECT_DOUBLE_EQ(parse_rate_gbps("1.6 Tb/s", "x"), 200.0);
  EXPECT_NEAR(parse_rate_gbps("25 GiB/s", "x"), 26.8435456, 1e-9);
}

TEST(Units, AmbiguousRatesAreRejectedWithTheInputNamed) {
  for (const char* bad : {"400", "400 gb/s", "400 gbps", "50GB", "400Gb", "50 G/s", "fast", "", "-400G", "inf G"}) {
    try {
      parse_rate_gbps(bad, "networks.yaml: x: rate");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("networks.yaml: x: rate"), std::string::npos) << msg;
      EXPECT_NE(msg.find("400 Gb/s"), std::string::npos) << "no accepted spelling in: " << msg;
    }
  }
}

TEST(Units, CountsFractionsAndNumbers) {
  EXPECT_DOUBLE_EQ(parse_count("7B", "p"), 7e9);
  EXPECT_DOUBLE_EQ(parse_count("6.7B", "p"), 6.7e9);
  EXPECT_DOUBLE_EQ(parse_count("7e9", "p"), 7e9);
  EXPECT_DOUBLE_EQ(parse_count("2M", "p"), 2e6);
  EXPECT_DOUBLE_EQ(parse_count("1T", "p"), 1e12);
  EXPECT_DOUBLE_EQ(parse_count("175000000000", "p"), 175e9);
  EXPECT_THROW(parse_count("7GB", "p"), UsageError);
  EXPECT_THROW(parse_count("seven", "p"), UsageError);
  EXPECT_DOUBLE_EQ(parse_fraction("40%", "f"), 0.4);
  EXPECT_DOUBLE_EQ(parse_fraction("0.4", "f"), 0.4);
  EXPECT_THROW(parse_fraction("140%", "f"), UsageError);
  EXPECT_THROW(parse_fraction("1.5", "f"), UsageError);
  EXPECT_THROW(parse_fraction("0.4x", "f"), UsageError);
  EXPECT_DOUBLE_EQ(parse_number(" 30 ", "n"), 30.0);
  EXPECT_THROW(parse_number("30us", "n"), UsageError);
}

}  // namespace
}  // namespace fb::model
