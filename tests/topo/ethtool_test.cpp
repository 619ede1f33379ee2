// An interface's driver statistics: the `ethtool -S` text a copied tree
// holds, which of the drivers' names count pause frames, and the SIOCETHTOOL
// ioctl against this machine's kernel (loopback, which every network
// namespace has, and whatever interfaces list statistics here).
#include "fabricbench/topo/ethtool.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace fb::topo {
namespace {

TEST(EthtoolText, ReadsNamesAndValuesInTheDriversOrder) {
  const auto stats = parse_ethtool_stats(
      "NIC statistics:\n     rx_packets: 12\n     port.link_xoff_rx: 3\n\n     tx_prio3_pause: "
      "18446744073709551615\n",
      "t/ethtool/eth0");
  ASSERT_TRUE(stats) << stats.why();
  EXPECT_EQ(stats->names, (std::vector<std::string>{"rx_packets", "port.link_xoff_rx", "tx_prio3_pause"}));
  EXPECT_EQ(stats->values, (std::vector<std::uint64_t>{12, 3, UINT64_MAX}));
  const auto none = parse_ethtool_stats("NIC statistics:", "t/ethtool/eth0");
  ASSERT_TRUE(none) << none.why();
  EXPECT_TRUE(none->names.empty());
}

TEST(EthtoolText, ALineThatIsNoCountIsUnknownNamingTheFileAndLine) {
  auto stats =
      parse_ethtool_stats("NIC statistics:\n     rx_packets: 12\n     rx_pause_ctrl_phy: -1\n", "t/ethtool/eth0");
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.why(), "t/ethtool/eth0: line 3: rx_pause_ctrl_phy: '-1' is not a count");
  stats = parse_ethtool_stats("NIC statistics:\n     rx_packets 12\n", "t/ethtool/eth0");
  EXPECT_EQ(stats.why(), "t/ethtool/eth0: line 2: 'rx_packets 12' is not 'name: value'");
  stats = parse_ethtool_stats("no stats available\n", "t/ethtool/eth0");
  EXPECT_NE(stats.why().find("'no stats available' where 'NIC statistics:' begins"), std::string::npos) << stats.why();
  EXPECT_FALSE(parse_ethtool_stats("", "t/ethtool/eth0"));
}

// Each driver's link-level and PFC pause counts, once per frame; never a
// duration, a transition count, an XON count or a second view of the same frames.
TEST(PauseStats, PicksEachDriversPauseCountsAndNothingBesideThem) {
  const std::vector<std::string> names{
      "rx_pause_ctrl_phy",           // 0 mlx5 link-level
      "tx_pause_ctrl_phy",           // 1
      "rx_prio0_pause",              // 2 mlx5 PFC
      "tx_prio7_pause",              // 3
      "rx_prio3_pause_duration",     // microseconds
      "rx_prio3_pause_transition",   // XOFF to XON
      "rx_prio8_pause",              // no ninth priority
      "rx_global_pause",             // the link-level frames again
      "link_xoff_rx.nic",            // 8 ice
      "link_xon_rx.nic",             // XON
      "tx_priority_5_xoff.nic",      // 10 ice PFC
      "port.rx_priority_2_xoff_rx",  // 11 i40e PFC
      "port.rx_priority_2_xon_2_xoff",
      "port.link_xoff_tx",  // 13 i40e
      "rx_pfc_frames",      // 14 bnxt
      "rx_pfc_ena_frames_pri0",
      "tx_pause_frames",  // 16 bnxt
      "rx_packets",
  };
  EXPECT_EQ(pause_stat_indices(names, PauseDirection::rx), (std::vector<std::size_t>{0, 2, 8, 11, 14}));
  EXPECT_EQ(pause_stat_indices(names, PauseDirection::tx), (std::vector<std::size_t>{1, 3, 10, 13, 16}));
  EXPECT_TRUE(pause_stat_indices({"rx_packets", "tx_queue_0_packets"}, PauseDirection::rx).empty());
}

TEST(PauseStats, ASumThatPassesSixtyFourBitsOrAnIndexPastTheListIsUnknown) {
  EXPECT_EQ(*sum_stats({5, 7, 100}, {0, 2}, "eth0"), 105u);
  const auto over = sum_stats({UINT64_MAX, 1}, {0, 1}, "eth0");
  ASSERT_FALSE(over);
  EXPECT_NE(over.why().find("2^64"), std::string::npos) << over.why();
  EXPECT_FALSE(sum_stats({1}, {1}, "eth0"));
}

// The kernel's answer for loopback: the driver has no statistics set, so
// GSSET_INFO succeeds and leaves ETH_SS_STATS out (no names), and GSTATS
// itself fails with EOPNOTSUPP: unknown with that reason, never 0.
TEST(EthtoolIoctl, LoopbackListsNoStatisticsAndReadingThemIsUnsupported) {
  const auto names = ethtool_stat_names("lo");
  ASSERT_TRUE(names) << names.why();
  EXPECT_TRUE(names->empty());
  const auto values = ethtool_stat_values("lo", 0);
  ASSERT_FALSE(values);
  EXPECT_EQ(values.why(), "ethtool statistics of lo: Operation not supported");
}

TEST(EthtoolIoctl, AnInterfaceThatIsNotThereIsUnknownWithTheKernelsReason) {
  const auto names = ethtool_stat_names("fbnosuch0");
  ASSERT_FALSE(names);
  EXPECT_EQ(names.why(), "ethtool statistics of fbnosuch0: No such device");
  EXPECT_EQ(ethtool_stat_values("fbnosuch0", 4).why(), "ethtool statistics of fbnosuch0: No such device");
}

// Every interface here whose driver lists statistics: the names come back
// whole, the values as many, and a list length other than the planned one
// is unknown before any value is taken.
TEST(EthtoolIoctl, AnInterfacesValuesMatchItsListAndAnotherLengthIsUnknown) {
  int read = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/net", ec)) {
    const std::string ifname = entry.path().filename().string();
    const auto names = ethtool_stat_names(ifname);
    if (!names || names->empty()) continue;
    for (const auto& name : *names) EXPECT_FALSE(name.empty()) << ifname;
    const auto values = ethtool_stat_values(ifname, names->size());
    ASSERT_TRUE(values) << ifname << ": " << values.why();
    EXPECT_EQ(values->size(), names->size()) << ifname;
    const auto other = ethtool_stat_values(ifname, names->size() + 1);
    ASSERT_FALSE(other) << ifname;
    EXPECT_NE(other.why().find("when the counters were planned"), std::string::npos) << other.why();
    ++read;
  }
  if (read == 0) GTEST_SKIP() << "no interface in this namespace lists ethtool statistics";
}

}  // namespace
}  // namespace fb::topo
