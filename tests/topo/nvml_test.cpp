// The real NVML loader on whatever this machine is: it never throws, and it
// either answers or says why not.
#include "fabricbench/topo/nvml.hpp"

#include <gtest/gtest.h>

namespace fb::topo {
namespace {

TEST(Nvml, LoadsOrSaysWhyNot) {
  const auto nvml = load_nvml();
  const std::string why = nvml->unavailable_reason();
  if (why.empty()) {
    // A machine with the driver: the system calls answer.
    EXPECT_TRUE(nvml->device_count()) << nvml->device_count().why();
    EXPECT_TRUE(nvml->driver_version()) << nvml->driver_version().why();
  } else {
    EXPECT_NE(why.find("NVML"), std::string::npos) << why;
    for (const auto& f : {nvml->name(0), nvml->uuid(0), nvml->pci_bus_id(0)}) {
      EXPECT_FALSE(f);
      EXPECT_EQ(f.why(), why);
    }
    EXPECT_FALSE(nvml->device_count());
    EXPECT_FALSE(nvml->nvlink_active(0, 0));
    // The sampling calls say the same reason (diagnose shows it per figure).
    EXPECT_EQ(nvml->utilization(0).why(), why);
    EXPECT_EQ(nvml->nvlink_data_kib(0, Direction::tx).why(), why);
    EXPECT_EQ(nvml->clock_reasons(0).why(), why);
    EXPECT_EQ(nvml->power_mw(0).why(), why);
    // So do the error counters (the fabric health reader plans none).
    EXPECT_EQ(nvml->gpu_counter(0, GpuCounter::xid_events).why(), why);
    EXPECT_EQ(nvml->gpu_counter(0, GpuCounter::ecc_corrected_volatile).why(), why);
  }
}

TEST(Nvml, SamplingCallsAnswerOrSayWhyOnGpuZero) {
  const auto nvml = load_nvml();
  if (!nvml->unavailable_reason().empty()) GTEST_SKIP() << nvml->unavailable_reason();
  const auto count = nvml->device_count();
  if (!count || *count == 0) GTEST_SKIP() << "no GPU";
  // Every call either answers or names the call that failed.
  const auto util = nvml->utilization(0);
  EXPECT_TRUE(util || util.why().find("nvmlDeviceGetUtilizationRates") != std::string::npos) << util.why();
  if (util) {
    EXPECT_LE(util->gpu_pct, 100u);
  }
  const auto sm = nvml->clock_mhz(0, ClockDomain::sm);
  const auto sm_max = nvml->max_clock_mhz(0, ClockDomain::sm);
  if (sm && sm_max) {
    EXPECT_LE(*sm, *sm_max + 50);  // NVML: current P0 clocks may differ from max by a few MHz
  }
  const auto used = nvml->memory_used_bytes(0);
  const auto total = nvml->memory_total_bytes(0);
  if (used && total) {
    EXPECT_LE(*used, *total);
  }
  const auto power = nvml->power_mw(0);
  const auto limit = nvml->power_limit_mw(0);
  if (power && limit) {
    EXPECT_GT(*limit, 0u);
  }
}

// On a GPU machine: each error counter answers, or is unknown naming the
// NVML call or field that did not (a GPU without NVLink or ECC).
TEST(Nvml, ErrorCountersAnswerOrNameTheirCallOnGpuZero) {
  const auto nvml = load_nvml();
  if (!nvml->unavailable_reason().empty()) GTEST_SKIP() << nvml->unavailable_reason();
  const auto count = nvml->device_count();
  if (!count || *count == 0) GTEST_SKIP() << "no GPU";
  for (auto c :
       {GpuCounter::nvlink_crc_flit_errors, GpuCounter::nvlink_replay_errors, GpuCounter::nvlink_recovery_errors,
        GpuCounter::ecc_corrected_volatile, GpuCounter::ecc_uncorrected_volatile, GpuCounter::xid_events,
        GpuCounter::throttle_power_ns, GpuCounter::throttle_thermal_ns}) {
    const auto v = nvml->gpu_counter(0, c);
    EXPECT_TRUE(v || v.why().find("nvml") != std::string::npos || v.why().find("NVML") != std::string::npos) << v.why();
  }
  // Cumulative: a second read is not below the first.
  const auto first = nvml->gpu_counter(0, GpuCounter::throttle_power_ns);
  const auto second = nvml->gpu_counter(0, GpuCounter::throttle_power_ns);
  if (first && second) {
    EXPECT_GE(*second, *first);
  }
}

TEST(Nvml, AnIndexPastTheLastGpuIsUnknownNotACrash) {
  const auto nvml = load_nvml();
  EXPECT_FALSE(nvml->name(4096));
  EXPECT_FALSE(nvml->nvlink_remote_bus_id(4096, 99));
  EXPECT_FALSE(nvml->gpu_counter(4096, GpuCounter::xid_events));
}

TEST(Nvml, AbsentAnswersWithItsReason) {
  const auto nvml = absent_nvml("not asked");
  EXPECT_EQ(nvml->unavailable_reason(), "not asked");
  EXPECT_EQ(nvml->memory_total_bytes(0).why(), "not asked");
  EXPECT_EQ(nvml->pcie_gen_max(0).why(), "not asked");
  EXPECT_EQ(nvml->temperature_c(0).why(), "not asked");
  EXPECT_EQ(nvml->pcie_throughput_kbps(0, Direction::rx).why(), "not asked");
  EXPECT_EQ(nvml->gpu_counter(0, GpuCounter::throttle_thermal_ns).why(), "not asked");
}

}  // namespace
}  // namespace fb::topo
