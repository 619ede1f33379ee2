// `fabricbench topo` end to end, alone and under mpirun, on this machine and on
// fixture trees; and the inventory lines `fabricbench run` records.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fabricbench/core/record.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

std::string fixture(const char* name) { return std::string(FB_TOPO_FIXTURES) + "/" + name; }

class TopoCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_topo_cli_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string topo() { return std::string(FB_BINARY) + " topo"; }
  std::string dir_;
};

std::vector<nlohmann::ordered_json> lines_of_type(const Results& r, const std::string& type) {
  std::vector<nlohmann::ordered_json> out;
  for (const auto& l : fb::test::json_lines(r.path))
    if (l["type"] == type) out.push_back(l);
  return out;
}

TEST_F(TopoCli, ThisMachineAloneWritesAReportAndARecord) {
  const auto r = run_process(topo() + " --out " + path("t.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fabricbench topo: 1 rank on 1 node"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("paths (spec peak per direction"), std::string::npos);
  EXPECT_NE(r.err.find("no differences between ranks"), std::string::npos) << r.err;
  const Results res = read_results(path("t.jsonl"));
  EXPECT_TRUE(res.complete);
  EXPECT_EQ(fb::test::json_lines(res.path).front()["command"], "topo");
  EXPECT_EQ(fb::test::json_lines(res.path).front()["schema_version"], schema_version());
  const auto inv = lines_of_type(res, "inventory");
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_EQ(inv[0]["rank"], 0);
  EXPECT_FALSE(inv[0]["rank_cpus"].get<std::string>().empty());
  // No invented figures: every peak is a positive number or null with a reason.
  for (const auto& p : inv[0]["paths"]) {
    if (p["peak_gbps"].is_null())
      EXPECT_FALSE(p["unknown_reason"].get<std::string>().empty());
    else
      EXPECT_GT(p["peak_gbps"].get<double>(), 0.0);
  }
  for (const auto& n : inv[0]["nics"])
    if (!n["rate_gbit"].is_null()) {
      EXPECT_GT(n["rate_gbit"].get<double>(), 0.0) << n.dump();
    }
  EXPECT_EQ(fb::test::json_lines(res.path).back()["heterogeneous"], false);
}

TEST_F(TopoCli, H200TreeReportsUnknownSpeedNotZero) {
  const auto r = run_process(topo() + " --sysfs-root " + fixture("h200-vm"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("speed unknown (eth0/speed reads -1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not asked: --sysfs-root"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("intra  PCIe"), std::string::npos) << r.out;  // the GPU, found in sysfs
  EXPECT_NE(r.out.find("\n    scope  class  peak (GB/s)  basis\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  rate (Gbit/s)  MTU (bytes)  "), std::string::npos) << r.out;
}

TEST_F(TopoCli, DifferentNodesFailStrictAndAreListed) {
  // Two emulated nodes reading different trees (MPMD: one argument list per rank).
  const std::string cmd = "FABRICBENCH_RANKS_PER_NODE=1 " + mpirun(1) + " " + topo() + " --strict --out " +
                          path("t.jsonl") + " --sysfs-root " + fixture("hgx-h100-8gpu-8ndr") + " : -np 1 " + topo() +
                          " --strict --out " + path("t.jsonl") + " --sysfs-root " + fixture("degraded-4gpu");
  const auto r = run_process(cmd);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("2 ranks on 2 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("heterogeneity: these differ"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nic_rates"), std::string::npos) << r.out;
  const Results res = read_results(path("t.jsonl"));
  EXPECT_EQ(lines_of_type(res, "inventory").size(), 2u);
  EXPECT_EQ(fb::test::json_lines(res.path).back()["heterogeneous"], true);
  EXPECT_EQ(fb::test::json_lines(res.path).back()["exit_code"], 1);
}

TEST_F(TopoCli, SameNodesPassStrictUnderMpirun) {
  const auto r = run_process("FABRICBENCH_RANKS_PER_NODE=1 " + mpirun(2) + " " + topo() + " --strict -q");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("2 ranks, 2 nodes"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("fabricbench topo:"), std::string::npos) << "quiet prints no report";
}

TEST_F(TopoCli, BadInputExitsTwoWithOneMessage) {
  auto r = run_process(mpirun(2) + " " + topo() + " --sysfs-root " + path("nothing"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sysfs-root"), std::string::npos) << r.err;
  r = run_process(topo() + " --out " + path("no/such/folder/t.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = run_process(topo() + " --bogus");
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(TopoCli, RunRecordsOneInventoryLinePerRankAfterTheHeader) {
  const auto r = run_process(mpirun(2) + " " + std::string(FB_BINARY) +
                             " run --progress off -q -b 1K -e 1K --ops all_reduce -n 2 -w 1 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_GE(fb::test::json_lines(res.path).size(), 4u);
  EXPECT_EQ(fb::test::json_lines(res.path).front()["schema_version"], schema_version());
  for (int rank = 0; rank < 2; ++rank) {
    const auto line = fb::test::json_lines(res.path)[static_cast<std::size_t>(rank + 1)];
    EXPECT_EQ(line["type"], "inventory");
    EXPECT_EQ(line["rank"], rank);
    EXPECT_EQ(line["local_rank"], rank);
    for (const char* key : {"host", "node", "gpus", "nics", "paths"}) EXPECT_TRUE(line.contains(key)) << key;
  }
  EXPECT_EQ(res.measurements.size(), 1u);  // out-of-place only: mpi's default placement
  EXPECT_TRUE(res.complete);
}

// --path names the filesystem and its mount options from the mount table,
// here a fixture: the test's folder as an sshfs mount, /dev/shm from a GPU
// node's copied table; a folder that does not exist exits 2 naming it.
TEST_F(TopoCli, PathNamesTheFilesystemAndItsMountOptions) {
  const std::string table = path("mountinfo");
  std::ofstream(table) << "27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme1n1p2 rw,errors=remount-ro\n"
                       << "119 27 0:40 / " << dir_
                       << " rw,nosuid,nodev,relatime - fuse.sshfs root@10.200.0.11:/srv/ds rw,user_id=0\n";
  const auto r = run_process(topo() + " --path " + dir_ + " --mountinfo " + table);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# filesystem of --path " + dir_), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 node: fuse.sshfs (network) root@10.200.0.11:/srv/ds, rw,nosuid,nodev,relatime"),
            std::string::npos)
      << r.out;
  const auto shm = run_process(topo() + " --path /dev/shm --mountinfo " + std::string(FB_STORAGE_FIXTURES) +
                               "/gpu-node.mountinfo");
  ASSERT_EQ(shm.exit_code, 0) << shm.err;
  EXPECT_NE(shm.out.find("1 node: tmpfs (memory) tmpfs, rw,nosuid,nodev"), std::string::npos) << shm.out;
  // Under mpirun, two ranks as two nodes: one line for both when they agree.
  const auto two = run_process("timeout 60 " + mpirun(2) + " -x FABRICBENCH_RANKS_PER_NODE=1 " + topo() +
                               " --path " + dir_ + " --mountinfo " + table);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("2 nodes: fuse.sshfs (network)"), std::string::npos) << two.out;
  const auto missing = run_process(topo() + " --path " + dir_ + "/missing");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--path '" + dir_ + "/missing': No such file or directory"), std::string::npos)
      << missing.err;
}

}  // namespace
}  // namespace fb
