// The domain scope end to end (issue 37): 4 local ranks as 4 emulated hosts
// (FABRICBENCH_RANKS_PER_NODE=1), each launched as its own app context so
// that each loads the stand-in driver library (tests/support/fake_nvml_lib.c)
// with its own NVLink fabric, as in nvl72_cli_test.cpp. Hosts 0 and 1 in one
// clique and 2 and 3 in another: two NVLink domains of two hosts each,
// measured at once, held to the GPU's NVLink (18 links of NVLink 5: 900 GB/s),
// not a NIC. Without fabric info, or with every host its own clique, no
// domain spans hosts: `--scope all` skips it saying why, and `--scope domain`
// alone measured nothing (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fabricbench/accept/spec_peak.hpp"
#include "fabricbench/core/record.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

constexpr const char* kRack = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
constexpr const char* kSweep = " --progress off --ops all_reduce -b 1K -e 1K -n 2 -w 1 --out ";

class DomainScopeCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_domain_scope_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // One host: one rank, its GPU in clique `clique` of the rack with 18 active NVLink 5 links.
  static std::string host(unsigned clique, const std::string& args) {
    return std::string(" -np 1 -x FABRICBENCH_RANKS_PER_NODE=1 -x LD_LIBRARY_PATH=") + FB_FAKE_NVML_DIR +
           " -x FB_FAKE_NVML_NVLINKS=18:7 -x FB_FAKE_NVML_FABRIC=" + kRack + ":" + std::to_string(clique) + " " +
           FB_BINARY + " " + args;
  }
  // Four hosts, host k in clique cliques[k], each running `args`.
  static std::string hosts(const std::vector<unsigned>& cliques, const std::string& args) {
    const std::string launcher = test::mpirun(1);
    std::string cmd = "timeout 120 " + launcher.substr(0, launcher.rfind(" -np "));
    for (std::size_t k = 0; k < cliques.size(); ++k) cmd += (k ? " :" : "") + host(cliques[k], args);
    return cmd;
  }
  // Four hosts without the stand-in library: no GPU, no fabric info.
  static std::string plain_hosts(const std::string& args) {
    return "timeout 120 " + test::mpirun(4) + " -x FABRICBENCH_RANKS_PER_NODE=1 " + FB_BINARY + " " + args;
  }
  static std::set<std::string> scopes_of(const Results& res) {
    std::set<std::string> out;
    for (const auto& m : res.measurements) out.insert(m.scope);
    return out;
  }
  static std::string domain_skip(const Results& res) {
    for (const auto& s : res.skips)
      if (s.scope == "domain" && s.op.empty()) return s.reason;
    return "";
  }
  std::string dir_;
};

TEST_F(DomainScopeCli, TwoDomainsOfTwoHostsAreMeasuredAtOnceAgainstTheirNvlinkPeak) {
  // -c: every element of the domain rows checked.
  const auto r =
      test::run_process(hosts({7, 7, 8, 8}, std::string("run --scope domain -c") + kSweep + path("d.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Results res = read_results(path("d.jsonl"));
  ASSERT_EQ(res.header.hosts.size(), 4u);
  ASSERT_FALSE(res.measurements.empty()) << r.out;
  for (const auto& m : res.measurements) {
    EXPECT_EQ(m.scope, "domain");
    EXPECT_EQ(m.groups, 2) << "two NVLink domains, measured at once";
    EXPECT_EQ(m.nranks, 2) << "two hosts in each";
    EXPECT_EQ(m.wrong, 0);
  }
  // Each rank's inventory has the domain path: its GPU's NVLink, naming the domain.
  ASSERT_EQ(res.inventory.size(), 4u);
  for (const auto& line : res.inventory) {
    const auto p =
        std::find_if(line.paths.begin(), line.paths.end(), [](const auto& x) { return x.scope == "domain"; });
    ASSERT_NE(p, line.paths.end()) << "rank " << line.rank;
    EXPECT_EQ(p->cls, "NVLink");
    ASSERT_TRUE(p->peak_gbps.has_value()) << p->unknown_reason;
    EXPECT_DOUBLE_EQ(*p->peak_gbps, 900.0);
    EXPECT_NE(p->basis.find(std::string(kRack) + (line.rank < 2 ? "/7" : "/8")), std::string::npos) << p->basis;
  }
  // What `check` and `report html` hold domain rows to: that NVLink for
  // rows NCCL ran over multi-node NVLink, never a NIC. (This run's host-memory
  // rows went over shared memory, which has no spec peak.)
  const accept::SpecPeak peak = accept::spec_peak(res, "domain", {"P2P/MNNVL"});
  ASSERT_TRUE(peak.known) << peak.reason;
  EXPECT_DOUBLE_EQ(peak.gbps, 900.0);
  EXPECT_EQ(peak.basis.rfind("NVLink: NVLink5 x18", 0), 0u) << peak.basis;
  EXPECT_FALSE(accept::spec_peak(res, "domain", {"NET/IB"}).known);
}

// Host memory crosses the network between trays of one domain: the mpi
// backend's inter scope keeps one rank per host (NCCL's takes one per
// domain: mpi.engine.np4, Scopes.InterTakesOneRankPerNvlinkDomain...).
TEST_F(DomainScopeCli, AllIncludesTheDomainAndHostMemoryInterHasEveryHost) {
  const auto r = test::run_process(hosts({7, 7, 8, 8}, std::string("run --scope all") + kSweep + path("all.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Results res = read_results(path("all.jsonl"));
  EXPECT_TRUE(scopes_of(res).count("domain")) << r.out;
  EXPECT_EQ(domain_skip(res), "");
  int inter_rows = 0;
  for (const auto& m : res.measurements)
    if (m.scope == "inter") {
      ++inter_rows;
      EXPECT_EQ(m.nranks, 4) << m.op << " " << m.bytes;
    }
  EXPECT_GT(inter_rows, 0) << r.out;
}

TEST_F(DomainScopeCli, AllSkipsTheDomainWithoutFabricInfoSayingWhy) {
  const auto r = test::run_process(plain_hosts(std::string("run --scope all") + kSweep + path("plain.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Results res = read_results(path("plain.jsonl"));
  EXPECT_FALSE(scopes_of(res).empty()) << r.out;
  EXPECT_FALSE(scopes_of(res).count("domain")) << r.out;
  EXPECT_NE(domain_skip(res).find("no rank's GPU is in a multi-node NVLink domain"), std::string::npos)
      << domain_skip(res);
  EXPECT_EQ(test::lines_with(r.out, "# scope domain skipped: no rank's GPU is in a multi-node NVLink domain").size(),
            1u)
      << r.out;
}

TEST_F(DomainScopeCli, EveryHostItsOwnCliqueHasNoDomainAcrossHosts) {
  const std::vector<unsigned> apart{1, 2, 3, 4};
  const auto r = test::run_process(hosts(apart, std::string("run --scope all") + kSweep + path("apart.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Results res = read_results(path("apart.jsonl"));
  EXPECT_FALSE(scopes_of(res).count("domain")) << r.out;
  EXPECT_NE(domain_skip(res).find("every NVLink domain of the job is within one node"), std::string::npos)
      << domain_skip(res);
  // Asked for by name, it measured nothing: refused like inter on one node.
  const auto alone = test::run_process(hosts(apart, std::string("run --scope domain") + kSweep + path("alone.jsonl")));
  EXPECT_EQ(alone.exit_code, 2) << alone.out << alone.err;
  EXPECT_FALSE(test::lines_with(alone.err,
                                "nothing was measured: scope domain skipped: every NVLink domain of the "
                                "job is within one node (4 domains)")
                   .empty())
      << alone.err;
}

}  // namespace
}  // namespace fb
