// `fabricbench run` end to end under mpirun: exit codes, the record, the
// messages users see for bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <tuple>

#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/timing_groups.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_cli_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string fabricbench() { return std::string(FB_BINARY) + " run --progress off"; }
  std::string dir_;
};

TEST_F(RunCli, SweepWritesOneRowPerOpSizeScopeAndPlacement) {
  const auto r = run_process(mpirun(4) + " " + fabricbench() +
                             " -b 1K -e 64K -f 4 -n 3 -w 1 -c --scope all --placement both --out " + path("r.jsonl") +
                             " --csv " + path("r.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# all_reduce  scope global"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Out of bounds values : 0 OK"), std::string::npos);

  const Results res = read_results(path("r.jsonl"));
  EXPECT_TRUE(res.complete);
  EXPECT_EQ(fb::test::json_lines(res.path).front()["ranks"], 4);
  EXPECT_EQ(fb::test::json_lines(res.path).front()["schema_version"], schema_version());
  std::map<std::tuple<std::string, std::string, std::uint64_t, bool>, int> rows;
  for (const auto& m : res.measurements) {
    ++rows[std::make_tuple(m.op, m.scope, m.bytes, m.in_place)];
    EXPECT_EQ(m.wrong, 0);
  }
  for (const auto& [key, n] : rows) EXPECT_EQ(n, 1);
  // One machine: global and intra run, inter, rail and domain (no NVLink
  // domain across hosts) say why they cannot.
  // 6 ops x 4 sizes x 2 placements - 4 (broadcast is in-place only on MPI) per scope.
  EXPECT_EQ(res.measurements.size(), 2u * (6 * 4 * 2 - 4));
  std::set<std::string> skipped_scopes;
  for (const auto& line : fb::test::json_lines(res.path))
    if (line["type"] == "skip" && line["op"] == "") skipped_scopes.insert(line["scope"].get<std::string>());
  EXPECT_EQ(skipped_scopes, (std::set<std::string>{"inter", "rail", "domain"}));

  std::ifstream csv(path("r.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("op,backend,scope", 0), 0u);
  std::size_t csv_rows = 0;
  for (std::string line; std::getline(csv, line);) ++csv_rows;
  EXPECT_EQ(csv_rows, res.measurements.size());
}

// Two runs of the same sweep, one with the watchdog (MPI_THREAD_FUNNELED)
// and one without (--timeout 0: MPI_THREAD_SINGLE): `report compare` says
// that they ran MPI unlike each other, in text and JSON, before any ratio is
// read as the fabric's; two runs alike say nothing.
TEST_F(RunCli, ReportCompareSaysWhenTheRunsRanMpiAtUnlikeThreadLevels) {
  const std::string sweep = " -b 8 -e 64 -f 8 -n 20 -w 2 --ops pingpong --out ";
  for (const auto& [name, flags] :
       {std::pair{"watched", ""}, std::pair{"also-watched", ""}, std::pair{"unwatched", " --timeout 0"}}) {
    // The watchdog on a thread of the rank runs MPI at FUNNELED (in its own process, at SINGLE).
    const std::string env = std::string(flags).empty() ? "FABRICBENCH_WATCHDOG=thread " : "";
    const auto r =
        run_process(env + mpirun(2) + " " + fabricbench() + flags + sweep + path(std::string(name) + ".jsonl"));
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  const std::string compare = std::string(FB_BINARY) + " report compare " + path("watched.jsonl") + " ";
  const auto text = run_process(compare + path("unwatched.jsonl"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("unlike: a ran MPI at MPI_THREAD_FUNNELED, b at MPI_THREAD_SINGLE"), std::string::npos)
      << text.out;
  const auto json_out = nlohmann::json::parse(run_process(compare + path("unwatched.jsonl") + " --format json").out);
  ASSERT_EQ(json_out["unlike"].size(), 1u) << json_out.dump();
  EXPECT_NE(json_out["unlike"][0].get<std::string>().find("FABRICBENCH_WATCHDOG=thread"), std::string::npos)
      << json_out.dump();
  const auto html = run_process(std::string(FB_BINARY) + " report html " + path("watched.jsonl") + " " +
                                path("unwatched.jsonl") + " -o " + path("both.html"));
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::ifstream page(path("both.html"));
  const std::string text_of_page((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(text_of_page.find("Unlike setups (a = A, b = B): a ran MPI at MPI_THREAD_FUNNELED"), std::string::npos);
  EXPECT_NE(text_of_page.find(" at MPI_THREAD_SINGLE</dd>"), std::string::npos) << "the record's facts say the level";
  const auto alike = run_process(compare + path("also-watched.jsonl"));
  ASSERT_EQ(alike.exit_code, 0) << alike.err;
  EXPECT_EQ(alike.out.find("unlike"), std::string::npos) << alike.out;
}

// The mpi backend's default: the rows IMB and OSU measure, one per op and
// size: out-of-place, and in-place for broadcast (MPI_Bcast has one buffer),
// with no skip for the placement it did not run.
TEST_F(RunCli, SweepOnMpiMeasuresOnePlacementPerOpUnlessAskedForBoth) {
  const auto r = run_process(mpirun(2) + " " + fabricbench() + " -b 1K -e 4K -f 4 -n 3 -w 1 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  std::map<std::string, std::set<std::pair<std::uint64_t, bool>>> rows;
  for (const auto& m : res.measurements) rows[m.op].insert({m.bytes, m.in_place});
  const std::set<std::pair<std::uint64_t, bool>> out{{1024, false}, {4096, false}};
  const std::map<std::string, std::set<std::pair<std::uint64_t, bool>>> want{
      {"all_reduce", out}, {"all_gather", out}, {"reduce_scatter", out}, {"broadcast", {{1024, true}, {4096, true}}},
      {"alltoall", out},   {"sendrecv", out}};
  EXPECT_EQ(rows, want);
  EXPECT_EQ(res.measurements.size(), 12u);
  const auto header = fb::test::json_lines(res.path).front();
  EXPECT_EQ(header["options"]["in_place"], false);
  EXPECT_EQ(header["options"]["in_place_where_out_refused"], true);
  for (const auto& line : fb::test::json_lines(res.path)) EXPECT_NE(line["type"], "skip") << line.dump();

  const auto both = run_process(mpirun(2) + " " + fabricbench() + " -b 1K -e 1K -n 3 -w 1 --placement both --out " +
                                path("both.jsonl"));
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(read_results(path("both.jsonl")).measurements.size(), 11u);  // 6 ops x 2 - broadcast out-of-place
}

TEST_F(RunCli, SizeNotDivisibleByRanksIsRoundedDown) {
  const auto r = run_process(mpirun(4) + " " + fabricbench() + " -b 100 -e 100 --ops all_gather,all_reduce -n 2 -c " +
                             "--out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  for (const auto& m : res.measurements) {
    EXPECT_EQ(m.bytes, m.op == "all_gather" ? 96u : 100u);  // all_gather: 6 floats per rank x 4; all_reduce: 25
    EXPECT_EQ(m.wrong, 0);
  }
}

// gather and scatter through the binary with -c on 2, 3 and 4 ranks, rooted
// at the last rank (so the root's own block and the others' take different
// paths from rank 0's), both placements.
class GatherScatterCli : public RunCli, public ::testing::WithParamInterface<int> {};

TEST_P(GatherScatterCli, EveryElementIsRightAndBusbwIsTheRingFactor) {
  const int n = GetParam();
  const int root = n - 1;
  const auto r = run_process(mpirun(n) + " " + fabricbench() +
                             " --ops gather,scatter -b 100 -e 6400 -f 4 -n 3 -w 1 --placement both " + "-c -r " +
                             std::to_string(root) + " --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Out of bounds values : 0 OK"), std::string::npos) << r.out;
  const Results res = read_results(path("r.jsonl"));
  std::map<std::tuple<std::string, bool>, int> rows;
  for (const auto& m : res.measurements) {
    ++rows[std::make_tuple(m.op, m.in_place)];
    EXPECT_EQ(m.wrong, 0) << m.op << " " << m.bytes << (m.in_place ? " in-place" : "");
    EXPECT_EQ(m.root, root);
    EXPECT_EQ(m.nranks, n);
    EXPECT_EQ(m.redop, "");  // nothing is reduced
    // nccl-tests' factor for both: busbw = algbw x (n-1)/n.
    EXPECT_NEAR(m.busbw_gbps, m.algbw_gbps * (n - 1) / n, 1e-12 * m.algbw_gbps) << m.op;
    EXPECT_GT(m.algbw_gbps, 0.0);
    // 100 B of float is 25 elements: 12, 8 or 6 per rank on 2, 3 or 4 ranks, 24 in all.
    if (m.bytes <= 100) {
      EXPECT_EQ(m.bytes, 96u) << m.op;
    }
  }
  // 100, 400, 1600, 6400 B for each op and placement.
  const std::map<std::tuple<std::string, bool>, int> want{
      {{"gather", false}, 4}, {{"gather", true}, 4}, {{"scatter", false}, 4}, {{"scatter", true}, 4}};
  EXPECT_EQ(rows, want);
}

INSTANTIATE_TEST_SUITE_P(Ranks, GatherScatterCli, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return "np" + std::to_string(info.param); });

TEST_F(RunCli, PointToPointBetweenChosenPeers) {
  const auto r = run_process(mpirun(3) + " " + fabricbench() + " -b 8 -e 4K -f 8 --ops pingpong,unidir,bidir " +
                             "--peers 2,0 -n 3 -c --window 8 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_EQ(res.measurements.size(), 3u * 4);  // 8, 64, 512, 4096 bytes
  for (const auto& m : res.measurements) {
    EXPECT_EQ(m.peer_a, 2);
    EXPECT_EQ(m.peer_b, 0);
    EXPECT_EQ(m.nranks, 2);
    EXPECT_FALSE(m.in_place);
    EXPECT_EQ(m.wrong, 0);
    EXPECT_NE(m.slowest_rank, 1);  // rank 1 sits out
  }
}

struct BadInput {
  std::string name;
  std::string args;
  std::string message;
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << "'" << b.args << "'"; }

class RunCliBadInput : public RunCli, public ::testing::WithParamInterface<BadInput> {};

TEST_P(RunCliBadInput, ExitsTwoWithOneClearMessage) {
  const auto r = run_process("timeout 60 " + mpirun(2) + " " + fabricbench() + " " + GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  // One message, from rank 0 alone.
  const auto first = r.err.find("fabricbench run:");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fabricbench run:", first + 1), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RunCliBadInput,
    ::testing::Values(BadInput{"SizesOutOfOrder", "-b 64M -e 8", "--maxbytes"},
                      BadInput{"ZeroSize", "-b 0", "--minbytes"},
                      BadInput{"StepFactorOne", "-f 1", "--stepfactor"},
                      BadInput{"UnknownOp", "--ops all_reduce,nope", "allowed"},
                      BadInput{"DatatypeMpiLacks", "-d half", "MPI has no half datatype"},
                      BadInput{"UnknownScope", "--scope sideways", "intra"},
                      BadInput{"MissingOutFolder", "--out /nonexistent-dir/r.jsonl", "does not exist"},
                      BadInput{"OutIsAFolder", "--out /tmp", "is a folder"},
                      BadInput{"MoreMemoryThanTheNode", "-b 12G -e 12G -d double --ops all_reduce", "host memory"},
                      BadInput{"UnknownFlag", "--unknown-flag", "--unknown-flag"},
                      BadInput{"RootOutsideTheJob", "-r 5 --ops broadcast", "--root 5"},
                      // Issue 35: sendrecv does not use --peers, so this measured 16 rows and exited 0.
                      BadInput{"PeersOutsideTheJob", "--peers 0,9 --ops sendrecv", "--peers 0,9: the job has 2 ranks"},
                      BadInput{"RootOutsideTheJobBesideAnotherOp", "-r 5 --ops broadcast,all_reduce",
                               "--root 5: the job has 2 ranks, 0 to 1"}),
    [](const auto& info) { return info.param.name; });

TEST_F(RunCli, FlagsThatDifferBetweenRanksAreRefused) {
  const std::string bin = fabricbench();
  const auto r = run_process(std::string(FB_MPIEXEC) + " --allow-run-as-root --oversubscribe --bind-to none -np 1 " +
                             bin + " -n 5 : -np 1 " + bin + " -n 6");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("differ"), std::string::npos) << r.err;
}

TEST_F(RunCli, HelpExitsZero) {
  const auto r = run_process(mpirun(2) + " " + fabricbench() + " --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--minbytes"), std::string::npos);
  EXPECT_NE(r.out.find("--time-budget"), std::string::npos);
  EXPECT_NE(r.out.find("alltoall, gather, scatter, sendrecv"), std::string::npos) << r.out;  // --ops lists every op
}

TEST_F(RunCli, TimeBudgetEndsASizeOnceSpent) {
  // 16 MiB all_reduce: a warm-up and two timed iterations spend well over
  // 1 ms, before the bytes cap (256 iterations) and with a target no interval
  // of two samples meets: the budget ends it, right after -n.
  const auto r = run_process(mpirun(2) + " " + fabricbench() + " -b 16M -e 16M --ops all_reduce --placement out " +
                             "-n 2 -w 1 --median-ci 0.0001 --time-budget 0.001 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_EQ(res.measurements.size(), 1u);
  EXPECT_EQ(res.measurements[0].time.iterations, 2u);
  EXPECT_EQ(res.measurements[0].stopped_by, "time");
}

TEST_F(RunCli, ItersIsTheMinimumWhateverTheBudgetAndCaps) {
  // The budget is spent after the first iteration: -n 6 still runs six (the
  // help says -n is the minimum).
  const auto r = run_process(mpirun(2) + " " + fabricbench() + " -b 16M -e 16M --ops all_reduce --placement out " +
                             "-n 6 -w 1 --time-budget 0.001 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_EQ(res.measurements.size(), 1u);
  EXPECT_EQ(res.measurements[0].time.iterations, 6u);
}

TEST_F(RunCli, WithoutItersACapEndsALargeSizeAfterSix) {
  // 64 MiB all_reduce: the time budget is spent by the first timed
  // iteration. A given -n is never cut short (the test above); the default
  // -n (10) gives way from kMinCappedIters on, and the header says so. Before,
  // this row ran 10 iterations, 640 MiB, and the header had no cap_min_iters.
  const auto r = run_process(mpirun(2) + " " + fabricbench() + " -b 64M -e 64M --ops all_reduce --placement out " +
                             "-w 1 --time-budget 0.001 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_EQ(res.measurements.size(), 1u);
  EXPECT_EQ(res.measurements[0].time.iterations, static_cast<std::size_t>(kMinCappedIters));
  EXPECT_EQ(res.measurements[0].stopped_by, "time");
  EXPECT_GT(res.measurements[0].time.ci_high_us, 0) << "six iterations still give the median an interval";
  EXPECT_EQ(res.header.options.get()["cap_min_iters"], kMinCappedIters);
  EXPECT_EQ(res.header.options.get()["cap_bytes_per_rank"], kMaxBytesPerSize);
}

TEST_F(RunCli, DefaultStopsOnceTheMedianIsKnown) {
  // A cheap op: at least -n, then on until the 95% interval of the median is
  // within +-2% (or a cap: iterations or, loaded, kDefaultSizeSeconds); the
  // row says which and carries the interval.
  const auto r = run_process(mpirun(2) + " " + fabricbench() + " -b 8 -e 8 --ops all_reduce --placement out " +
                             "-n 20 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_EQ(res.measurements.size(), 1u);
  const auto& m = res.measurements[0];
  EXPECT_GE(m.time.iterations, 20u);
  // Timings: 8 B iterations are timed in groups (time_samples), else one each.
  const std::size_t timings = m.time.samples > 0 ? m.time.samples : m.time.iterations;
  EXPECT_LE(timings, static_cast<std::size_t>(kMaxAdaptiveSamples) + kMaxHostGroup);
  EXPECT_LE(m.time.iterations, static_cast<std::size_t>(kMaxAdaptiveSamples) * kMaxHostGroup);
  EXPECT_LE(m.time.ci_low_us, m.time.median_us);
  EXPECT_GE(m.time.ci_high_us, m.time.median_us);
  if (m.stopped_by == "ci") {
    EXPECT_LE(m.time.ci_high_us - m.time.median_us, 0.02 * m.time.median_us * (1 + 1e-9));
    EXPECT_LE(m.time.median_us - m.time.ci_low_us, 0.02 * m.time.median_us * (1 + 1e-9));
  } else if (m.stopped_by == "iterations") {
    EXPECT_GE(timings, static_cast<std::size_t>(kMaxAdaptiveSamples));
  } else {
    EXPECT_EQ(m.stopped_by, "time");  // kDefaultSizeSeconds on a loaded machine; 8 bytes reach no byte cap
  }
}

// A row a cap ended before its interval reached the target is a looser
// figure: the run's closing lines count them by cap, as the record's
// stopped_by does, and say what gives them longer. A budget no size can
// settle in ends every row at the time cap; --median-ci 0 sets no target.
TEST_F(RunCli, RowsACapEndedBeforeTheirIntervalAreCountedAtTheEnd) {
  const auto r =
      run_process(mpirun(2) + " " + fabricbench() + " -b 8 -e 1K --ops all_reduce,pingpong --placement out " +
                  "--time-budget 0.000001 --out " + path("r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("r.jsonl"));
  std::size_t capped = 0;
  for (const auto& m : res.measurements) capped += m.stopped_by == "time";
  ASSERT_GT(capped, 0u);
  EXPECT_NE(r.err.find(fmt::format("fabricbench run: {} of {} rows ended before the 95% interval of their median was "
                                   "within +-2% ({} at the 1e-06 s time cap)",
                                   capped, res.measurements.size(), capped)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--time-budget S gives each size longer"), std::string::npos) << r.err;

  // --median-ci 0 with a budget still stops at the default +-2% (docs/run.md): counted alike.
  const auto budget = run_process(mpirun(2) + " " + fabricbench() + " -b 8 -e 64 --ops all_reduce --placement out " +
                                  "--median-ci 0 --time-budget 0.000001 --out " + path("b.jsonl"));
  ASSERT_EQ(budget.exit_code, 0) << budget.err;
  EXPECT_NE(budget.err.find("rows ended before the 95% interval of their median was within +-2% ("), std::string::npos)
      << budget.err;

  const auto fixed = run_process(mpirun(2) + " " + fabricbench() + " -b 8 -e 1K --ops all_reduce --placement out " +
                                 "--median-ci 0 -n 5 --out " + path("f.jsonl") + " --overwrite");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.err.find("rows ended before"), std::string::npos) << fixed.err;
}

// `fabricbench run` without mpirun is a job of one rank: its rows time a
// local copy, and the run says so where a two-rank run does not.
TEST_F(RunCli, OneRankSaysNoByteCrossesALink) {
  const auto alone = run_process(fabricbench() + " -b 8 -e 8 --ops all_reduce --out " + path("one.jsonl"));
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_NE(alone.err.find("one rank: no byte crosses a link"), std::string::npos) << alone.err;
  EXPECT_NE(alone.err.find("mpirun -np 2 fabricbench run"), std::string::npos) << alone.err;
  const auto two =
      run_process(mpirun(2) + " " + fabricbench() + " -b 8 -e 8 --ops all_reduce --out " + path("two.jsonl"));
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.err.find("no byte crosses a link"), std::string::npos) << two.err;
}

}  // namespace
}  // namespace fb
