#include "fabricbench/core/sizes.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

TEST(ParseBytes, PlainAndBinarySuffixes) {
  EXPECT_EQ(parse_bytes("8", "-b"), 8u);
  EXPECT_EQ(parse_bytes("1K", "-b"), 1024u);
  EXPECT_EQ(parse_bytes("64M", "-b"), 64ull << 20);
  EXPECT_EQ(parse_bytes("8G", "-b"), 8ull << 30);
  EXPECT_EQ(parse_bytes("2T", "-b"), 2ull << 40);
  EXPECT_EQ(parse_bytes("4MiB", "-b"), 4ull << 20);
  EXPECT_EQ(parse_bytes("16B", "-b"), 16u);
  EXPECT_EQ(parse_bytes(" 32 ", "-b"), 32u);
}

TEST(ParseBytes, RejectsBadFormsNamingTheFlag) {
  for (const char* bad : {"", "-8", "1.5M", "12X", "K", "1 M 2", "99999999999999999999", "20000000T"}) {
    try {
      parse_bytes(bad, "--maxbytes");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--maxbytes"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseBytes, DecimalUnitsAreAmbiguous) {
  try {
    parse_bytes("1GB", "-e");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous"), std::string::npos);
  }
}

TEST(Expand, FactorGridIsNcclTestsGrid) {
  const auto s = expand({8, 64, 2.0, 0});
  EXPECT_EQ(s, (std::vector<std::uint64_t>{8, 16, 32, 64}));
}

TEST(Expand, StepGridAndEndNotOnGrid) {
  EXPECT_EQ(expand({1024, 4000, 2.0, 1024}), (std::vector<std::uint64_t>{1024, 2048, 3072}));
  EXPECT_EQ(expand({8, 100, 4.0, 0}), (std::vector<std::uint64_t>{8, 32}));
}

TEST(Expand, SmallFactorStillAdvances) {
  const auto s = expand({1, 5, 1.01, 0});
  EXPECT_EQ(s, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
}

TEST(Expand, RejectsBadGrids) {
  EXPECT_THROW(expand({0, 8, 2.0, 0}), UsageError);
  EXPECT_THROW(expand({64, 8, 2.0, 0}), UsageError);
  EXPECT_THROW(expand({8, 64, 1.0, 0}), UsageError);
  EXPECT_THROW(expand({8, 64, 0.5, 0}), UsageError);
  EXPECT_THROW(expand({1, 1ull << 40, 2.0, 1}), UsageError);  // far too many sizes
}

// Found by tests/fuzz/sizes_fuzz.cpp: steps that would pass 2^64 wrapped
// around (additive) or converted 2^64 to uint64 (factor, undefined).
TEST(SizeGrid, StepsNearTheTopOfTheRangeEndTheGrid) {
  constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(expand({top - 10, top, 2.0, 8}), (std::vector<std::uint64_t>{top - 10, top - 2}));
  EXPECT_EQ(expand({10, top, 2.0, top - 5}), (std::vector<std::uint64_t>{10}));
  EXPECT_EQ(expand({1ull << 63, top, 2.0, 0}), (std::vector<std::uint64_t>{1ull << 63}));
  EXPECT_EQ(expand({top, top, 1.5, 0}), (std::vector<std::uint64_t>{top}));
}

TEST(FormatBytes, Readable) {
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(64 << 10), "64 KiB");
  EXPECT_EQ(format_bytes(3ull << 29), "1.5 GiB");
}

}  // namespace
}  // namespace fb
