// Spec peaks and the parsers of the kernel's rate strings.
#include "fabricbench/topo/spec.hpp"

#include <gtest/gtest.h>

namespace fb::topo {
namespace {

TEST(Spec, PcieLaneRatesAfterEncoding) {
  EXPECT_DOUBLE_EQ(*pcie_lane_gbps(1), 0.25);
  EXPECT_DOUBLE_EQ(*pcie_lane_gbps(2), 0.5);
  EXPECT_NEAR(*pcie_lane_gbps(3), 0.985, 0.001);
  EXPECT_NEAR(*pcie_lane_gbps(4), 1.969, 0.001);
  EXPECT_NEAR(*pcie_lane_gbps(5), 3.938, 0.001);
  EXPECT_NEAR(*pcie_lane_gbps(6), 7.563, 0.001);
}

TEST(Spec, PciePeaksOfCommonLinks) {
  EXPECT_NEAR(*pcie_peak_gbps(3, 16), 15.75, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(4, 16), 31.51, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(5, 16), 63.02, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(4, 8), 15.75, 0.01);
}

TEST(Spec, PcieOutsideTheSpecIsUnknownNotGuessed) {
  EXPECT_FALSE(pcie_peak_gbps(0, 16));
  EXPECT_FALSE(pcie_peak_gbps(7, 16));
  EXPECT_FALSE(pcie_peak_gbps(5, 0));
  EXPECT_NE(pcie_peak_gbps(7, 16).why().find("generation 7"), std::string::npos);
}

TEST(Spec, PcieGenerationFromSysfsSpeed) {
  EXPECT_EQ(*pcie_gen_from_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(*pcie_gen_from_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(*pcie_gen_from_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(*pcie_gen_from_speed("8 GT/s"), 3);  // older kernels
  EXPECT_EQ(*pcie_gen_from_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(*pcie_gen_from_speed("64.0 GT/s PCIe"), 6);
  for (const char* odd : {"Unknown", "Unknown speed", "", "12.0 GT/s PCIe", "32.0 Gb/s"})
    EXPECT_FALSE(pcie_gen_from_speed(odd)) << odd;
}

TEST(Spec, NvLinkPeaksFromDatasheets) {
  EXPECT_DOUBLE_EQ(*nvlink_link_gbps(4) * 18, 450.0);  // H100, H200
  EXPECT_DOUBLE_EQ(*nvlink_link_gbps(4) * 8, 200.0);   // H800
  EXPECT_DOUBLE_EQ(*nvlink_link_gbps(3) * 12, 300.0);  // A100
  EXPECT_DOUBLE_EQ(*nvlink_link_gbps(5) * 18, 900.0);  // B200
  EXPECT_FALSE(nvlink_link_gbps(6));
}

TEST(Spec, NvLinkGenerationFromArchitectureAndNvmlVersion) {
  EXPECT_EQ(*nvlink_generation_of_arch(9), 4);  // Hopper
  EXPECT_EQ(*nvlink_generation_of_arch(7), 3);  // Ampere
  EXPECT_EQ(*nvlink_generation_of_arch(10), 5);
  EXPECT_FALSE(nvlink_generation_of_arch(8));  // Ada has none
  EXPECT_NE(nvlink_generation_of_arch(8).why().find("Ada"), std::string::npos);
  EXPECT_FALSE(nvlink_generation_of_arch(42));
  EXPECT_EQ(*nvlink_generation_of_nvml_version(6), 4);
  EXPECT_EQ(*nvlink_generation_of_nvml_version(3), 2);  // 2.2
  EXPECT_FALSE(nvlink_generation_of_nvml_version(0));
  EXPECT_FALSE(nvlink_generation_of_nvml_version(99));
  EXPECT_EQ(arch_name(9), "Hopper");
}

TEST(Spec, InfinibandRateStrings) {
  const auto ndr = parse_ib_rate("400 Gb/sec (4X NDR)");
  ASSERT_TRUE(ndr);
  EXPECT_DOUBLE_EQ(ndr->gbit, 400);
  EXPECT_EQ(ndr->width_speed, "4X NDR");
  EXPECT_EQ(ndr->speed, "NDR");
  EXPECT_DOUBLE_EQ(gbit_to_gbps(ndr->gbit), 50.0);
  EXPECT_DOUBLE_EQ(parse_ib_rate("2.5 Gb/sec (1X SDR)")->gbit, 2.5);
  EXPECT_DOUBLE_EQ(parse_ib_rate("100 Gb/sec")->gbit, 100);
  EXPECT_EQ(parse_ib_rate("56 Gb/sec (4X FDR)\n")->speed, "FDR");
}

TEST(Spec, OddRateStringsAreUnknownWithTheString) {
  for (const char* odd : {"", "fast", "Unknown", "400 Mb/sec (4X NDR)", "0 Gb/sec (4X NDR)", "-5 Gb/sec",
                          "400 Gb/sec 4X NDR", "nan Gb/sec"}) {
    const auto r = parse_ib_rate(odd);
    EXPECT_FALSE(r) << odd;
    EXPECT_NE(r.why().find(std::string("'") + odd + "'"), std::string::npos) << r.why();
  }
}

TEST(Spec, FormatsRatesWithoutTrailingZeros) {
  EXPECT_EQ(format_gbit(400), "400 Gb/s");
  EXPECT_EQ(format_gbit(2.5), "2.5 Gb/s");
}

}  // namespace
}  // namespace fb::topo
