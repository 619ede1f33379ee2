// Error counters read from a copied sysfs tree (fixtures/counters-ib and
// counters-roce, make-counter-fixtures.sh): the test reads, changes a
// counter file as a fault would, reads again, and holds the moves to what
// happened. A saturated or reset counter is unknown with the reason, never 0.
#include "fabricbench/topo/counters.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace fb::topo {
namespace {

namespace fs = std::filesystem;

const char* const kIbPort = "sys/class/infiniband/mlx5_0/ports/1/";

// A writable copy of a fixture tree, removed at the end.
class CounterTree : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  Sysfs copy(const char* name) {
    root_ = (fs::temp_directory_path() / "fb_counters_XXXXXX").string();
    if (!mkdtemp(root_.data())) throw std::runtime_error("mkdtemp failed");
    fs::copy(std::string(FB_TOPO_FIXTURES) + "/" + name, root_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    return Sysfs(root_);
  }
  void put(const std::string& rel, const std::string& text) {
    std::ofstream out(root_ + "/" + rel, std::ios::trunc);
    out << text << "\n";
    ASSERT_TRUE(out.good()) << rel;
  }
  // The moves between a read now and a read after `change`.
  template <typename F>
  std::vector<CounterMove> around(const Sysfs& s, F change) {
    const CounterPlan plan = plan_counters(s);
    const auto before = read_counters(s, plan);
    change();
    return counter_moves(before, read_counters(s, plan));
  }
  std::string root_;
};

std::set<std::string> counters_of(const CounterPlan& plan, const std::string& device) {
  std::set<std::string> out;
  for (const auto& r : plan.readings)
    if (r.device == device) out.insert(std::string(counter_row(r.counter).name));
  return out;
}

TEST(CounterTable, NamesAreUniqueAndFoundBack) {
  std::set<std::string_view> names;
  for (const auto& row : counter_rows()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    ASSERT_NE(find_counter(row.name), nullptr);
    EXPECT_EQ(find_counter(row.name)->counter, row.counter);
  }
  EXPECT_EQ(find_counter("no_such_counter"), nullptr);
  // The widths InfiniBand's PortCounters give them (IBA 16.1.3.5).
  EXPECT_EQ(counter_row(Counter::symbol_error).bits, 16);
  EXPECT_EQ(counter_row(Counter::link_downed).bits, 8);
  EXPECT_EQ(counter_row(Counter::link_error_recovery).bits, 8);
  EXPECT_EQ(counter_row(Counter::tcp_retrans_segs).bits, 64);
}

TEST_F(CounterTree, PlansAnIbNodesPortInterfaceFunctionAndTcp) {
  const Sysfs s = copy("counters-ib");
  const CounterPlan plan = plan_counters(s);
  EXPECT_EQ(counters_of(plan, "mlx5_0:1").size(), 8u);  // no hw_counters folder: none planned
  EXPECT_EQ(counters_of(plan, "ib0").size(), 6u);
  EXPECT_EQ(counters_of(plan, "0000:00:02.0"),
            (std::set<std::string>{"aer_correctable", "aer_nonfatal", "aer_fatal"}));  // once for port and interface
  EXPECT_EQ(counters_of(plan, "node"), std::set<std::string>{"tcp_retrans_segs"});
  EXPECT_TRUE(counters_of(plan, "lo").empty());
  EXPECT_EQ(plan.readings.size(), 8u + 6u + 3u + 1u);
  for (const auto& r : read_counters(s, plan)) EXPECT_TRUE(r.value) << r.path << ": " << r.value.why();
}

TEST_F(CounterTree, PlansTheRoceDriversHardwareCounters) {
  const Sysfs s = copy("counters-roce");
  const auto port = counters_of(plan_counters(s), "mlx5_0:1");
  EXPECT_EQ(port.size(), 14u);
  EXPECT_TRUE(port.count("roce_adp_retrans"));
  EXPECT_TRUE(port.count("np_cnp_sent"));
  const auto eth2 = counters_of(plan_counters(s), "eth2");
  EXPECT_EQ(eth2.size(), 6u + 2u);  // statistics/ and carrier_changes, and the pause sums of ethtool/eth2
  EXPECT_TRUE(eth2.count("rx_pause_frames"));
  EXPECT_TRUE(eth2.count("tx_pause_frames"));
}

// The RoCE tree's ethtool/eth2 as `ethtool -S eth2` would print it, with
// these values of the link-level and priority-3 receive pause counts and
// the statistics beside them that are not pause frames.
std::string mlx5_ethtool_text(int rx_link_pause, int rx_prio3_pause, int rx_prio3_duration_us) {
  return "NIC statistics:\n     rx_packets: 1200\n     tx_packets: 1100\n     rx_pause_ctrl_phy: " +
         std::to_string(rx_link_pause) +
         "\n     tx_pause_ctrl_phy: 0\n     rx_prio3_bytes: 9000\n     rx_prio3_packets: 300\n     rx_prio3_pause: " +
         std::to_string(rx_prio3_pause) + "\n     rx_prio3_pause_duration: " + std::to_string(rx_prio3_duration_us) +
         "\n     rx_prio3_pause_transition: 10\n     tx_prio3_pause: 4\n     tx_prio3_pause_duration: 16\n"
         "     link_down_events_phy: 1";
}

// PFC on a RoCE link: the switch paused priority 3 fifteen times and the
// whole link twice during the row; the interface's received pause frames
// moved by their sum, and the transmit side, unchanged, did not move.
TEST_F(CounterTree, PfcAndLinkPauseFramesAreOneMoveOfTheirSumOnTheInterface) {
  const Sysfs s = copy("counters-roce");
  put("ethtool/eth2", mlx5_ethtool_text(0, 10, 40));
  const auto moves = around(s, [&] { put("ethtool/eth2", mlx5_ethtool_text(2, 25, 9000)); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "eth2");
  EXPECT_EQ(moves[0].device_kind, "interface");
  EXPECT_EQ(moves[0].counter, "rx_pause_frames");
  ASSERT_TRUE(moves[0].delta) << moves[0].unknown_reason;
  EXPECT_EQ(*moves[0].delta, 17u) << "rx_prio3_pause 10 -> 25 and rx_pause_ctrl_phy 0 -> 2; not the duration";
}

TEST_F(CounterTree, AnInterfaceWhoseDriverListsNoPauseStatisticPlansNoPauseCounter) {
  const Sysfs s = copy("counters-roce");
  put("ethtool/eth2",
      "NIC statistics:\n     rx_queue_0_packets: 10\n     tx_queue_0_packets: 12\n     rx_prio3_pause_duration: 5");
  const auto eth2 = counters_of(plan_counters(s), "eth2");
  EXPECT_EQ(eth2.size(), 6u) << "the netdev counters only";
  EXPECT_FALSE(eth2.count("rx_pause_frames"));
  EXPECT_FALSE(eth2.count("tx_pause_frames"));
  // No file at all: the tree holds no ethtool -S output for it, nothing to plan either.
  fs::remove(root_ + "/ethtool/eth2");
  EXPECT_EQ(counters_of(plan_counters(s), "eth2").size(), 6u);
}

TEST_F(CounterTree, AMalformedEthtoolLineIsUnknownNamingTheFileNotZero) {
  const Sysfs s = copy("counters-roce");
  const auto moves = around(s, [&] {
    put("ethtool/eth2",
        "NIC statistics:\n     rx_pause_ctrl_phy: 0\n     rx_prio3_pause: lots\n     tx_prio3_pause: 4");
  });
  ASSERT_EQ(moves.size(), 2u) << "the file says nothing of either direction";
  for (const auto& m : moves) {
    EXPECT_EQ(m.device, "eth2");
    EXPECT_FALSE(m.delta) << m.counter;
    EXPECT_NE(m.unknown_reason.find("ethtool/eth2: line 3"), std::string::npos) << m.unknown_reason;
    EXPECT_NE(m.unknown_reason.find("'lots' is not a count"), std::string::npos) << m.unknown_reason;
  }
}

// PFC switched on for one more priority lists two more statistics: every
// planned position may now name another statistic, so no delta is told.
TEST_F(CounterTree, AChangedStatisticsListIsUnknownNotADelta) {
  const Sysfs s = copy("counters-roce");
  const auto moves = around(s, [&] {
    put("ethtool/eth2", mlx5_ethtool_text(0, 10, 40) + "\n     rx_prio4_pause: 0\n     tx_prio4_pause: 0");
  });
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].counter, "rx_pause_frames");
  EXPECT_EQ(moves[1].counter, "tx_pause_frames");
  for (const auto& m : moves) {
    EXPECT_FALSE(m.delta);
    EXPECT_NE(m.unknown_reason.find("14 statistics, 12 when the counters were planned"), std::string::npos)
        << m.unknown_reason;
  }
}

// AWS EFA (p5-class): no InfiniBand PortCounters, the driver's SRD counters
// in hw_counters instead; a path change after a retransmit timeout is a move.
TEST_F(CounterTree, AnEfaPortsSrdRetransmitTimeoutIsAMoveOnThatPort) {
  const Sysfs s = copy("efa-2gpu");
  const std::string hw = "sys/class/infiniband/rdmap36s0/ports/1/hw_counters/";
  fs::create_directories(root_ + "/" + hw);
  for (const char* name :
       {"rx_drops", "rdma_read_wr_err", "rdma_write_wr_err", "retrans_pkts", "retrans_timeout_events",
        "unresponsive_remote_events", "impaired_remote_conn_events", "tx_bytes"})
    put(hw + name, "0");
  const auto port = counters_of(plan_counters(s), "rdmap36s0:1");
  EXPECT_TRUE(port.count("retrans_timeout_events"));
  EXPECT_TRUE(port.count("impaired_remote_conn_events"));
  EXPECT_FALSE(port.count("tx_bytes")) << "traffic is not an error";
  EXPECT_FALSE(counters_of(plan_counters(s), "rdmap37s0:1").count("retrans_pkts")) << "no hw_counters there";
  const auto moves = around(s, [&] { put(hw + "retrans_timeout_events", "2"); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "rdmap36s0:1");
  EXPECT_EQ(moves[0].counter, "retrans_timeout_events");
  ASSERT_TRUE(moves[0].delta) << moves[0].unknown_reason;
  EXPECT_EQ(*moves[0].delta, 2u);
}

// A GPU's PCIe link is counted like a NIC's: its function's AER totals,
// once per GPU, never for the switches and bridges between.
TEST_F(CounterTree, AGpusCorrectedPcieErrorsAreAMoveOnItsFunction) {
  const Sysfs s = copy("hgx-h100-8gpu-8ndr");
  const std::string gpu = "sys/bus/pci/devices/0000:1a:00.0/";
  const auto aer = [&](int corrected) {
    put(gpu + "aer_dev_correctable",
        "RxErr " + std::to_string(corrected) + "\nTOTAL_ERR_COR " + std::to_string(corrected));
    put(gpu + "aer_dev_nonfatal", "TLP 0\nTOTAL_ERR_NONFATAL 0");
    put(gpu + "aer_dev_fatal", "DLP 0\nTOTAL_ERR_FATAL 0");
  };
  aer(3);
  const CounterPlan plan = plan_counters(s);
  EXPECT_EQ(counters_of(plan, "0000:1a:00.0"), (std::set<std::string>{"aer_correctable", "aer_nonfatal", "aer_fatal"}));
  EXPECT_EQ(counters_of(plan, "0000:3b:00.0").size(), 3u) << "every GPU, its files there or not";
  EXPECT_TRUE(counters_of(plan, "0000:00:1c.0").empty()) << "a bridge is no GPU";
  const auto moves = around(s, [&] { aer(10); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "0000:1a:00.0");
  EXPECT_EQ(moves[0].device_kind, "gpu") << "the GPU is the device, as for its NVML counters: a row on GPUs uses it";
  EXPECT_EQ(moves[0].counter, "aer_correctable");
  ASSERT_TRUE(moves[0].delta) << moves[0].unknown_reason;
  EXPECT_EQ(*moves[0].delta, 7u);
}

TEST_F(CounterTree, AnUnchangedTreeMovesNothing) {
  const Sysfs s = copy("counters-roce");
  EXPECT_TRUE(around(s, [] {}).empty());
}

TEST_F(CounterTree, ASymbolErrorOnPortOneIsADeltaOfOneOnThatPort) {
  const Sysfs s = copy("counters-ib");
  const auto moves = around(s, [&] { put(std::string(kIbPort) + "counters/symbol_error", "1"); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "mlx5_0:1");
  EXPECT_EQ(moves[0].device_kind, "port");
  EXPECT_EQ(moves[0].counter, "symbol_error");
  ASSERT_TRUE(moves[0].delta);
  EXPECT_EQ(*moves[0].delta, 1u);
  EXPECT_EQ(moves[0].unknown_reason, "");
}

TEST_F(CounterTree, ASaturatedSixteenBitCounterIsUnknownNotZero) {
  const Sysfs s = copy("counters-ib");
  put(std::string(kIbPort) + "counters/symbol_error", "65534");
  auto moves = around(s, [&] { put(std::string(kIbPort) + "counters/symbol_error", "65535"); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_FALSE(moves[0].delta);
  EXPECT_NE(moves[0].unknown_reason.find("saturated"), std::string::npos) << moves[0].unknown_reason;
  EXPECT_NE(moves[0].unknown_reason.find("65535"), std::string::npos) << moves[0].unknown_reason;
  // Stuck at the top, it cannot show the row's errors either.
  moves = around(s, [] {});
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_FALSE(moves[0].delta);
  // An 8-bit counter stops at 255, a 64-bit one never.
  put(std::string(kIbPort) + "counters/symbol_error", "0");
  put(std::string(kIbPort) + "counters/link_downed", "255");
  moves = around(s, [] {});
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].counter, "link_downed");
  EXPECT_FALSE(moves[0].delta);
  put(std::string(kIbPort) + "counters/link_downed", "254");
  moves = around(s, [&] { put("sys/class/net/ib0/statistics/rx_dropped", "65535"); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(*moves[0].delta, 65535u);
}

TEST_F(CounterTree, AResetIsUnknownNotNegative) {
  const Sysfs s = copy("counters-ib");
  put(std::string(kIbPort) + "counters/port_rcv_errors", "10");
  const auto moves = around(s, [&] { put(std::string(kIbPort) + "counters/port_rcv_errors", "3"); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].counter, "port_rcv_errors");
  EXPECT_FALSE(moves[0].delta);
  EXPECT_NE(moves[0].unknown_reason.find("fell from 10 to 3"), std::string::npos) << moves[0].unknown_reason;
}

TEST_F(CounterTree, TcpRetransmissionsAndAerAreAttributedToTheNodeAndTheFunction) {
  const Sysfs s = copy("counters-roce");
  const auto moves = around(s, [&] {
    put("proc/net/snmp",
        "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs "
        "OutSegs RetransSegs InErrs OutRsts InCsumErrors\nTcp: 1 200 120000 -1 10 5 0 0 3 5000 4000 19 0 1 0");
    put("sys/class/net/eth2/device/aer_dev_correctable", "RxErr 2\nBadTLP 1\nTOTAL_ERR_COR 3");
  });
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].device, "0000:43:00.0");
  EXPECT_EQ(moves[0].device_kind, "pci");
  EXPECT_EQ(moves[0].counter, "aer_correctable");
  EXPECT_EQ(*moves[0].delta, 3u);
  EXPECT_EQ(moves[1].device, "node");
  EXPECT_EQ(moves[1].device_kind, "node");
  EXPECT_EQ(moves[1].counter, "tcp_retrans_segs");
  EXPECT_EQ(*moves[1].delta, 12u);
}

TEST_F(CounterTree, AFileThatGoesAwayIsUnknownWithTheReason) {
  const Sysfs s = copy("counters-ib");
  const auto moves = around(s, [&] { fs::remove(root_ + "/sys/class/net/ib0/statistics/tx_errors"); });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].counter, "tx_errors");
  EXPECT_FALSE(moves[0].delta);
  EXPECT_NE(moves[0].unknown_reason.find("No such file"), std::string::npos) << moves[0].unknown_reason;
  // Gone in both reads: nothing a row changed.
  EXPECT_TRUE(around(s, [] {}).empty());
}

TEST(CounterMoves, TravelAsTextAndBack) {
  const std::vector<CounterMove> moves{{"mlx5_0:1", "port", "symbol_error", 4, ""},
                                       {"eth0", "interface", "rx_errors", std::nullopt, "fell\tfrom 9\nto 1"}};
  const auto back = decode_moves(encode_moves(moves));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].device, "mlx5_0:1");
  EXPECT_EQ(*back[0].delta, 4u);
  EXPECT_FALSE(back[1].delta);
  EXPECT_EQ(back[1].unknown_reason, "fell from 9 to 1");
  EXPECT_TRUE(decode_moves("").empty());
  EXPECT_THROW(decode_moves("a\tb\n"), std::runtime_error);
}

}  // namespace
}  // namespace fb::topo
