// A GPU that is not the job's alone, end to end: the real binary under
// mpirun, with the stand-in driver library (tests/support/fake_nvml_lib.c)
// on the ranks' LD_LIBRARY_PATH saying which processes hold a context on
// GPU0. This test process plays "another process": it is in this node's
// /proc, under its own name, and is no rank of the job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fabricbench/core/inventory_gpus.hpp"
#include "fabricbench/core/record.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

// 1 MiB of all_reduce, quickly: the rule under test reads the inventory.
const char* kProfile = R"(name: sharing
backend: mpi
sweeps:
  - ops: [all_reduce]
    minbytes: 1M
    maxbytes: 1M
    iters: 3
    warmup: 1
rules:
  - {name: GPUs to ourselves, kind: shared_gpus}
)";

class SharingCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_sharing_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // 2 ranks that load the stand-in NVML; `processes` as FB_FAKE_NVML_PROCESSES.
  static std::string ranks(const std::string& processes, const std::string& more_env = "") {
    return "timeout 240 " + mpirun(2) + " -x LD_LIBRARY_PATH=" + FB_FAKE_NVML_DIR +
           " -x FB_FAKE_NVML_PROCESSES=" + processes + more_env + " " + FB_BINARY;
  }
  static std::string me() { return std::to_string(getpid()); }
  std::string check(const std::string& processes, const std::string& more_env = "") const {
    std::ofstream(path("sharing.yaml")) << kProfile;
    return ranks(processes, more_env) + " check --progress off -q --profile " + path("sharing.yaml") + " --out-dir " +
           path("out");
  }
  nlohmann::json check_json() const {
    std::ifstream in(path("out/check.json"));
    return nlohmann::json::parse(in, nullptr, false);
  }
  std::string dir_;
};

TEST_F(SharingCli, TopoFlagsAnotherProcessOnTheGpuButNotTheJobsOwnRanks) {
  const auto r = run_process(ranks("0:" + me() + ":30720,0:self:1024") + " topo --out " + path("t.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Each rank's own context is the job's; this test process's is not.
  EXPECT_NE(r.out.find("GPU0: in use by 1 other process: pid " + me() + " ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 30.0 GiB)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("2 other processes"), std::string::npos) << r.out;
  const Results res = read_results(path("t.jsonl"));
  ASSERT_EQ(res.inventory.size(), 2u);
  for (const auto& line : res.inventory) {
    const auto gpus = rank_gpus(line);
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0].compute_mode, "default");
    EXPECT_EQ(gpus[0].mig, false);
    ASSERT_TRUE(gpus[0].others);
    ASSERT_EQ(gpus[0].others->size(), 1u);
    EXPECT_EQ(gpus[0].others->front().pid, getpid());
    EXPECT_EQ(gpus[0].others->front().used_memory_bytes, 30ull << 30);
  }
}

TEST_F(SharingCli, CheckFailsAGpuSharedWithAnotherProcessNamingTheNodeAndThePid) {
  const auto r = run_process(check("0:" + me() + ":30720,0:self:1024"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPUs to ourselves"), std::string::npos) << r.out;
  const auto report = check_json();
  ASSERT_TRUE(report.is_object()) << r.err;
  EXPECT_EQ(report["status"], "fail");
  const std::string text = report.dump();
  EXPECT_NE(text.find("GPU0: pid " + me()), std::string::npos) << text;
  EXPECT_NE(text.find("request nvidia.com/gpu"), std::string::npos) << text;
}

TEST_F(SharingCli, CheckFailsMigAndPassesAGpuThatIsTheJobsAlone) {
  auto r = run_process(check("0:self:1024", " -x FB_FAKE_NVML_MIG=0"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(check_json().dump().find("MIG mode on"), std::string::npos) << check_json().dump();
  std::filesystem::remove_all(path("out"));
  r = run_process(check("0:self:1024", " -x FB_FAKE_NVML_COMPUTE_MODE=0:3"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(check_json()["status"], "pass") << check_json().dump();
  EXPECT_NE(check_json().dump().find("theirs alone"), std::string::npos) << check_json().dump();
}

// A node with no GPU (the stand-in driver answers zero GPUs): nothing to
// judge, and a profile that asks fails the rule as not judged, saying why.
TEST_F(SharingCli, CheckCannotJudgeANodeWithoutGpusAndSaysWhy) {
  const auto r = run_process(check("", " -x FB_FAKE_NVML_GPUS=0"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("not judged: no inventory line says who else uses its GPUs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fb
