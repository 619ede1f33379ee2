// The GPUs' error counters end to end (issue 36): the real binary on 2 local
// ranks (one node), the stand-in driver library (tests/support/
// fake_nvml_lib.c) on their LD_LIBRARY_PATH answering for 2 GPUs from a
// counters file. While the run measures, the test raises GPU 1's XID and
// NVLink CRC counts as a failing GPU would: the record gets `counters` lines
// for node 0 and GPU 1's bus id, run prints the fabric health section, and
// check's counters rule on xid_events exits 1 blaming that node and GPU.
// With the file left alone: no line, no section, exit 0. The sysfs counters
// read an empty folder (FABRICBENCH_COUNTERS_ROOT), so that this machine's
// own interfaces cannot add lines.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "fabricbench/core/record.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

// GPU 1 as the stand-in library names it (bus E0 + index), as the inventory spells it.
const char* const kFakeGpuOneBusId = "0000:e1:00.0";

class GpuCountersCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("fb_gpu_counters_cli_");
    std::filesystem::create_directories(path("empty-root"));
    write_counters(0);
    std::ofstream(path("xid.yaml")) << "name: gpu counters\nbackend: mpi\nsweeps:\n"
                                       "  - {ops: [all_reduce], minbytes: 64K, maxbytes: 1M, iters: 40}\n"
                                       "rules:\n  - {kind: counters, counter: xid_events, max: 0}\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // Both GPUs' counters, GPU 1's XID and CRC counts at `gpu1_errors`,
  // written whole (a new file renamed over the old: a read never sees half).
  void write_counters(int gpu1_errors) const {
    const std::string file = path("counters.txt");
    std::ofstream(file + ".new") << "0 xid_events 0\n0 nvlink_crc_errors 5\n0 ecc_corrected 2\n"
                                 << "1 xid_events " << gpu1_errors << "\n1 nvlink_crc_errors " << gpu1_errors
                                 << "\n1 ecc_corrected 2\n";
    std::filesystem::rename(file + ".new", file);
  }
  std::string launch() const {
    return "timeout 180 " + test::mpirun(2) + " -x LD_LIBRARY_PATH=" + FB_FAKE_NVML_DIR +
           " -x FB_FAKE_NVML_GPUS=2 -x FB_FAKE_NVML_COUNTERS=" + path("counters.txt") +
           " -x FABRICBENCH_COUNTERS_ROOT=" + path("empty-root") + " " + FB_BINARY;
  }
  std::string run_command(const std::string& record) const {
    return launch() + " run --progress off -q -b 1K -e 256K -f 2 -n 40 -w 2 --median-ci 0 --out " + path(record);
  }
  std::string check_command(const std::string& out) const {
    return launch() + " check --progress off -q --profile " + path("xid.yaml") + " --out-dir " + path(out);
  }
  // Runs `command` while GPU 1's XID and CRC counts rise by one every millisecond.
  test::ProcessResult with_gpu_errors_rising(const std::string& command) const {
    std::atomic<bool> done{false};
    std::thread raiser([&] {
      for (int n = 1; !done; ++n) {
        write_counters(n);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    auto r = test::run_process(command);
    done = true;
    raiser.join();
    return r;
  }
  std::string dir_;
};

TEST_F(GpuCountersCli, UntouchedGpuCountersAddNoLineAndCheckPasses) {
  const auto r = test::run_process(run_command("quiet.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(test::lines_with(r.err, "fabric health").empty()) << r.err;
  const Results res = read_results(path("quiet.jsonl"));
  EXPECT_GE(res.measurements.size(), 8u);
  EXPECT_TRUE(res.counters.empty()) << res.counters.front().device << " " << res.counters.front().counter;
  const auto c = test::run_process(check_command("quiet"));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
}

TEST_F(GpuCountersCli, XidAndCrcErrorsOnGpuOneAreRecordedUnderItsBusId) {
  const auto r = with_gpu_errors_rising(run_command("errors.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("errors.jsonl"));
  ASSERT_FALSE(res.counters.empty()) << "no row saw GPU 1's counters rise\n" << r.err;
  std::set<std::string> counters;
  for (const auto& c : res.counters) {
    EXPECT_EQ(c.node, 0);
    EXPECT_EQ(c.host, res.header.hosts.at(0));
    EXPECT_EQ(c.device, kFakeGpuOneBusId);
    EXPECT_EQ(c.device_kind, "gpu");
    EXPECT_FALSE(c.exercised) << "the mpi backend's buffers are in host memory: its rows use no GPU";
    ASSERT_TRUE(c.delta) << c.unknown_reason;
    EXPECT_GE(*c.delta, 1u);
    ASSERT_LT(c.row, res.measurements.size());
    EXPECT_EQ(c.bytes, res.measurements[c.row].bytes);
    counters.insert(c.counter);
  }
  EXPECT_EQ(counters, (std::set<std::string>{"nvlink_crc_errors", "xid_events"}));
  ASSERT_EQ(test::lines_with(r.err, "fabric health").size(), 1u) << r.err;
  EXPECT_FALSE(test::lines_with(r.err, kFakeGpuOneBusId).empty()) << r.err;
}

TEST_F(GpuCountersCli, CheckFailsOnXidEventsBlamingTheNodeAndGpu) {
  const auto c = with_gpu_errors_rising(check_command("errors"));
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  std::ifstream in(path("errors/check.json"));
  const auto report = nlohmann::json::parse(in);
  ASSERT_FALSE(report["bad"].empty()) << report.dump(1);
  const Results res = read_results(path("errors/results.jsonl"));
  for (const auto& bad : report["bad"]) {
    EXPECT_EQ(bad["host"], res.header.hosts.at(0));
    EXPECT_EQ(bad["device"], kFakeGpuOneBusId);
  }
}

}  // namespace
}  // namespace fb
