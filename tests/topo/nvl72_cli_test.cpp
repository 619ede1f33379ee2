// Emulated hosts standing in for GB200 NVL72 trays (issue 37), end to end:
// 2 local ranks as 2 emulated nodes (FABRICBENCH_RANKS_PER_NODE=1), each
// launched as its own app context so that each loads the stand-in driver
// library (tests/support/fake_nvml_lib.c) with its own fabric: the cluster
// UUID and clique nvmlDeviceGetGpuFabricInfo answers. Trays in one clique:
// topo lists one NVLink domain spanning both hosts, and check's
// nvlink_domain rule passes. One tray in another clique: topo says the job
// spans two domains, and the rule fails naming the smaller one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "fabricbench/core/record.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

constexpr const char* kNvl72Rack = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";

class Nvl72Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("fb_nvl72_cli_");
    std::ofstream(path("domain.yaml")) << "name: nvl72\nbackend: mpi\nsweeps:\n"
                                          "  - {ops: [all_reduce], minbytes: 1K, maxbytes: 1K, iters: 2}\n"
                                          "rules:\n  - {name: one NVLink domain, kind: hardware, nvlink_domain: 2}\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // One tray: one rank, its node's one GPU in clique `clique` of the rack.
  static std::string tray(unsigned clique, const std::string& args) {
    return std::string(" -np 1 -x FABRICBENCH_RANKS_PER_NODE=1 -x LD_LIBRARY_PATH=") + FB_FAKE_NVML_DIR +
           " -x FB_FAKE_NVML_FABRIC=" + kNvl72Rack + ":" + std::to_string(clique) + " " + FB_BINARY + " " + args;
  }
  // Two trays in cliques `first` and `second`, each running `args`.
  static std::string trays(unsigned first, unsigned second, const std::string& args) {
    const std::string launcher = test::mpirun(1);
    return "timeout 120 " + launcher.substr(0, launcher.rfind(" -np ")) + tray(first, args) + " :" + tray(second, args);
  }
  // The domain of each inventory line's GPUs, as the record says.
  std::set<std::string> domains_in(const std::string& record) const {
    std::set<std::string> out;
    for (const auto& inv : read_results(path(record)).inventory)
      for (const auto& g : inv.line.get().at("gpus")) out.insert(g.at("fabric").at("domain").get<std::string>());
    return out;
  }
  std::string dir_;
};

TEST_F(Nvl72Cli, TwoTraysInOneCliqueAreOneDomainSpanningBothHosts) {
  const auto r = test::run_process(trays(7, 7, "topo --out " + path("one.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string domain = std::string(kNvl72Rack) + "/7";
  EXPECT_EQ(domains_in("one.jsonl"), std::set<std::string>{domain});
  const Results res = read_results(path("one.jsonl"));
  ASSERT_EQ(res.header.hosts.size(), 2u);
  const auto listed = test::lines_with(r.out, domain + ": 2 GPUs on 2 hosts");
  ASSERT_EQ(listed.size(), 1u) << r.out;
  EXPECT_NE(listed[0].find(res.header.hosts[0] + ", " + res.header.hosts[1]), std::string::npos) << listed[0];
  EXPECT_TRUE(test::lines_with(r.out, "spans 2 NVLink domains").empty()) << r.out;
  const auto c = test::run_process(
      trays(7, 7, "check --progress off -q --profile " + path("domain.yaml") + " --out-dir " + path("one-check")));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
}

TEST_F(Nvl72Cli, ATrayInAnotherCliqueIsFlagged) {
  const auto r = test::run_process(trays(7, 8, "topo --out " + path("split.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(domains_in("split.jsonl"),
            (std::set<std::string>{std::string(kNvl72Rack) + "/7", std::string(kNvl72Rack) + "/8"}));
  EXPECT_EQ(test::lines_with(r.out, "the job spans 2 NVLink domains: traffic between them takes the network").size(),
            1u)
      << r.out;
  const auto c = test::run_process(
      trays(7, 8, "check --progress off -q --profile " + path("domain.yaml") + " --out-dir " + path("split-check")));
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_FALSE(test::lines_with(c.out, "2 NVLink domains of the run's GPUs; the smallest: 1 GPUs").empty()) << c.out;
}

}  // namespace
}  // namespace fb
