// Bimodal rows end to end (core/modes.hpp) on 2 local ranks: the steady
// curves of shared memory, and a `pairs` run's links, record no bimodal row
// and pass check's bimodal rule. A flapping link is found on emulated nodes
// (cluster.ClusterBimodal.*).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fabricbench/core/record.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

using test::lines_with;

class Bimodal : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_bimodal_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string binary() { return std::string(FB_BINARY); }
  std::string judge(const std::string& record, const std::string& out) const {
    const std::string file = path("bimodal.yaml");
    std::ofstream(file) << "name: bimodal\nbackend: mpi\nsweeps:\n  - {ops: [all_reduce], minbytes: 4K, maxbytes: 4K, "
                           "iters: 3}\nrules:\n  - {kind: bimodal}\n";
    return binary() + " check --results " + record + " --out-dir " + path(out) + " --profile " + file;
  }
  std::string dir_;
};

TEST_F(Bimodal, SteadyCurvesOnSharedMemoryHaveNoBimodalRow) {
  // Every default op from 1 KiB to 4 MiB, both placements, 40 timed iterations each (the adaptive stop off:
  // every row is judged).
  const std::string record = path("steady.jsonl");
  const auto r = run_process(mpirun(2) + " " + binary() +
                             " run --progress off -q -b 1K -e 4M -f 4 -n 40 -w 2 --median-ci 0 --placement both --out " + record);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(lines_with(r.err, "warning: bimodal").empty()) << r.err;
  const Results res = read_results(record);
  ASSERT_GE(res.measurements.size(), 60u);
  for (const auto& m : res.measurements) {
    EXPECT_EQ(m.time.iterations, 40u);
    EXPECT_FALSE(m.modes.has_value()) << m.op << " " << m.bytes << ": " << modes_text(*m.modes);
  }
  const auto c = run_process(judge(record, "a"));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
}

TEST_F(Bimodal, SteadyLinksOfPairsHaveNoBimodalPair) {
  // Two emulated nodes of one rank each on shared memory: every pair's four tests, 20 timed iterations each.
  // No low-link findings (--threshold 0): the 2 loaded cores make one direction slower now and then.
  const std::string record = path("pairs.jsonl");
  const auto r = run_process("FABRICBENCH_RANKS_PER_NODE=1 " + mpirun(2) + " " + binary() +
                             " pairs --progress off --size 1M -n 20 -w 2 --threshold 0 --out " + record);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("bimodal: link"), std::string::npos) << r.out;
  const Results res = read_results(record);
  ASSERT_FALSE(res.pairs.empty());
  for (const auto& p : res.pairs) {
    EXPECT_GE(p.iterations, 20u);
    EXPECT_FALSE(p.modes.has_value()) << p.modes->op << ": " << modes_text(*p.modes);
  }
  const auto c = run_process(judge(record, "a"));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("none of the 1 links judged"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace fb
