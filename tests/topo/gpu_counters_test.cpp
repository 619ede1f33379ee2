// The GPUs' error and throttle counters (issue 36) on the in-process fake
// NVML: the test reads, changes a GPU's counter as a fault would, reads
// again, and holds the moves to what happened. A counter NVML does not
// have is unknown with NVML's reason and writes no line; a fallen one is
// unknown, never negative.
#include <gtest/gtest.h>

#include "fabricbench/topo/counters.hpp"
#include "fake_nvml.hpp"

namespace fb::topo {
namespace {

using test::FakeNvml;

// Two L40S (bus ids 41 and C1) with every counter at `start`.
FakeNvml two_counting_gpus(std::uint64_t start = 0) {
  FakeNvml f = test::fake_roce_l40s();
  for (auto& g : f.gpus)
    for (auto c :
         {GpuCounter::nvlink_crc_flit_errors, GpuCounter::nvlink_replay_errors, GpuCounter::nvlink_recovery_errors,
          GpuCounter::ecc_corrected_volatile, GpuCounter::ecc_uncorrected_volatile, GpuCounter::xid_events,
          GpuCounter::throttle_power_ns, GpuCounter::throttle_thermal_ns})
      g.counters[c] = start;
  return f;
}

// The moves between a read now and a read after `change`.
template <typename F>
std::vector<CounterMove> gpu_moves_around(FakeNvml& nvml, F change) {
  const CounterPlan plan = plan_gpu_counters(nvml);
  const auto before = read_gpu_counters(nvml, plan);
  change();
  return counter_moves(before, read_gpu_counters(nvml, plan));
}

TEST(GpuCounters, EveryGpuCounterIsPlannedOnEveryGpuUnderItsBusId) {
  FakeNvml nvml = two_counting_gpus();
  const CounterPlan plan = plan_gpu_counters(nvml);
  std::size_t on_c1 = 0;
  for (const auto& r : plan.readings) {
    EXPECT_EQ(r.device_kind, "gpu");
    EXPECT_EQ(counter_row(r.counter).source, CounterSource::nvml);
    EXPECT_TRUE(r.device == "0000:41:00.0" || r.device == "0000:c1:00.0") << r.device;
    if (r.device == "0000:c1:00.0") {
      EXPECT_EQ(r.gpu, 1u);
      ++on_c1;
    }
  }
  EXPECT_EQ(on_c1, 8u);
  EXPECT_EQ(plan.readings.size(), 16u);
  ASSERT_NE(find_counter("xid_events"), nullptr);  // check's counters rule accepts the GPU names
  EXPECT_EQ(find_counter("xid_events")->source, CounterSource::nvml);
}

TEST(GpuCounters, ACrcErrorOnGpuOneIsADeltaOnGpuOnesBusId) {
  FakeNvml nvml = two_counting_gpus(7);
  const auto moves = gpu_moves_around(nvml, [&] { nvml.gpus[1].counters[GpuCounter::nvlink_crc_flit_errors] += 3; });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "0000:c1:00.0");
  EXPECT_EQ(moves[0].device_kind, "gpu");
  EXPECT_EQ(moves[0].counter, "nvlink_crc_errors");
  ASSERT_TRUE(moves[0].delta) << moves[0].unknown_reason;
  EXPECT_EQ(*moves[0].delta, 3u);
}

TEST(GpuCounters, ThrottleTimeIsRecordedInMicroseconds) {
  FakeNvml nvml = two_counting_gpus();
  const auto moves = gpu_moves_around(nvml, [&] { nvml.gpus[0].counters[GpuCounter::throttle_thermal_ns] += 250'000; });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "0000:41:00.0");
  EXPECT_EQ(moves[0].counter, "throttle_thermal_us");
  ASSERT_TRUE(moves[0].delta);
  EXPECT_EQ(*moves[0].delta, 250u);
}

TEST(GpuCounters, AnUnsupportedCallIsUnknownWithTheReasonAndWritesNoLine) {
  FakeNvml nvml = two_counting_gpus();
  nvml.gpus[1].counters.erase(GpuCounter::ecc_corrected_volatile);  // a GPU without ECC
  const CounterPlan plan = plan_gpu_counters(nvml);
  bool seen = false;
  for (const auto& r : read_gpu_counters(nvml, plan))
    if (r.gpu == 1 && r.counter == Counter::ecc_corrected) {
      seen = true;
      ASSERT_FALSE(r.value);
      EXPECT_NE(r.value.why().find("Not Supported"), std::string::npos) << r.value.why();
    }
  EXPECT_TRUE(seen);
  // Unknown before and after: nothing a row could have caused, no line.
  EXPECT_TRUE(gpu_moves_around(nvml, [] {}).empty());
}

TEST(GpuCounters, ACallThatFailsAfterTheRowIsUnknownWithNvmlsReason) {
  FakeNvml nvml = two_counting_gpus();
  const auto moves = gpu_moves_around(nvml, [&] { nvml.gpus[0].failing.insert("gpu_counter"); });
  ASSERT_EQ(moves.size(), 8u);  // every counter of GPU 0
  for (const auto& m : moves) {
    EXPECT_EQ(m.device, "0000:41:00.0");
    EXPECT_FALSE(m.delta);
    EXPECT_NE(m.unknown_reason.find("unreadable after the row"), std::string::npos) << m.unknown_reason;
    EXPECT_NE(m.unknown_reason.find("NVML error 999"), std::string::npos) << m.unknown_reason;
  }
}

TEST(GpuCounters, AFallenValueIsUnknownNotNegative) {
  FakeNvml nvml = two_counting_gpus(10);
  const auto moves = gpu_moves_around(nvml, [&] { nvml.gpus[1].counters[GpuCounter::ecc_uncorrected_volatile] = 4; });
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "0000:c1:00.0");
  EXPECT_EQ(moves[0].counter, "ecc_uncorrected");
  EXPECT_FALSE(moves[0].delta);
  EXPECT_NE(moves[0].unknown_reason.find("fell from 10 to 4"), std::string::npos) << moves[0].unknown_reason;
}

TEST(GpuCounters, WithoutNvmlNothingIsPlanned) {
  FakeNvml nvml = two_counting_gpus();
  nvml.reason = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  EXPECT_TRUE(plan_gpu_counters(nvml).readings.empty());
  EXPECT_TRUE(plan_gpu_counters(*absent_nvml("no driver")).readings.empty());
}

}  // namespace
}  // namespace fb::topo
