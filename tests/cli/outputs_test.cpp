// What `fabricbench run` does with its files and with a run that measured
// nothing, through the real binary under mpirun (issue 17): existing files
// and links are not written over, two outputs need two files, a full disk
// ends the job cleanly with whole lines, every reader takes a record whose
// last line a crash cut, a run that measured nothing of what it was asked is
// exit 2 with the reasons even under -q, and every row carries the run's id.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "fabricbench/core/record.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

class RunOutputs : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_outputs_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string run(int ranks, const std::string& args) {
    return "timeout 120 " + mpirun(ranks) + " " + FB_BINARY + " run --progress off " + args;
  }
  static std::string small() { return "-b 8 -e 64 -f 8 -n 3 -w 1 --ops all_reduce "; }
  static std::string text_of(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string dir_;
};

// Exit 0 after printing nothing, before: `--scope inter` on one node.
TEST_F(RunOutputs, NothingMeasuredOfWhatWasAskedIsExitTwoAndQuietSaysWhy) {
  const auto inter = run_process(run(2, small() + "-q --scope inter --out " + path("inter.jsonl")));
  EXPECT_EQ(inter.exit_code, 2) << inter.err;
  EXPECT_NE(inter.err.find("scope inter skipped: one node"), std::string::npos) << inter.err;
  EXPECT_NE(inter.err.find("nothing was measured"), std::string::npos) << inter.err;
  const Results rec = read_results(path("inter.jsonl"));
  ASSERT_TRUE(rec.summary);
  EXPECT_EQ(rec.summary->exit_code, 2);
  EXPECT_NE(rec.summary->reason.find("one node"), std::string::npos) << rec.summary->reason;

  const auto peers = run_process(run(2, "-b 8 -e 8 -n 3 -w 1 --ops pingpong --peers 0,7 -q"));
  EXPECT_EQ(peers.exit_code, 2) << peers.err;
  EXPECT_NE(peers.err.find("--peers 0,7: the job has 2 ranks, 0 to 1"), std::string::npos) << peers.err;

  // A scope named with --scope that measured nothing, beside one that did.
  const auto named = run_process(run(2, small() + "-q --scope global,inter"));
  EXPECT_EQ(named.exit_code, 2) << named.err;
  EXPECT_NE(named.err.find("--scope inter measured nothing"), std::string::npos) << named.err;
  // `all` asks for the scopes that apply: inter and rail may skip; -q still says why.
  const auto all = run_process(run(2, small() + "-q --scope all"));
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.err.find("scope inter skipped"), std::string::npos) << all.err;
}

TEST_F(RunOutputs, AnExistingFileNeedsOverwriteAndTwoOutputsNeedTwoFiles) {
  std::ofstream(path("old.jsonl")) << "an earlier run\n";
  const auto refused = run_process(run(2, small() + "-q --out " + path("old.jsonl")));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("exists: give --overwrite"), std::string::npos) << refused.err;
  EXPECT_EQ(text_of(path("old.jsonl")), "an earlier run\n");
  EXPECT_EQ(run_process(run(2, small() + "-q --overwrite --out " + path("old.jsonl"))).exit_code, 0);
  EXPECT_TRUE(read_results(path("old.jsonl")).complete);

  const auto same = run_process(run(2, small() + "-q --out " + path("x") + " --csv " + dir_ + "/./x"));
  EXPECT_EQ(same.exit_code, 2) << same.err;
  EXPECT_NE(same.err.find("--out and --csv both name"), std::string::npos) << same.err;
  EXPECT_FALSE(std::filesystem::exists(path("x")));
}

// Two runs with the same --out --overwrite once interleaved their lines into
// one corrupt record. While another process writes the file (its lock held,
// here by this test, as a first run would hold it), a second run refuses
// with exit 2 before measuring and leaves the file as it was.
TEST_F(RunOutputs, ARecordAnotherRunIsWritingIsRefusedAndLeftWhole) {
  const std::string out = path("busy.jsonl");
  std::ofstream(out) << "the first run's lines\n";
  const int holder = ::open(out.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
  const auto second = run_process(run(2, small() + "--out " + out + " --overwrite"));
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("'" + out + "' is being written by another fabricbench right now"), std::string::npos)
      << second.err;
  EXPECT_EQ(text_of(out), "the first run's lines\n");
  ::close(holder);
  const auto after = run_process(run(2, small() + "--out " + out + " --overwrite"));
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_TRUE(read_results(out).complete);
}

TEST_F(RunOutputs, ALinkWhereAnOutputGoesIsNeverWrittenThrough) {
  std::ofstream(path("precious")) << "keep me\n";
  std::filesystem::create_symlink(path("precious"), path("r.jsonl"));
  std::filesystem::create_symlink(path("precious"), path("r.csv"));
  for (const std::string& flags : {"--out " + path("r.jsonl"), "--csv " + path("r.csv")}) {
    const auto r = run_process(run(2, small() + "-q --overwrite " + flags));
    EXPECT_EQ(r.exit_code, 2) << flags << r.err;
    EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  }
  EXPECT_EQ(text_of(path("precious")), "keep me\n");
}

// Before: rank 0 died of SIGABRT (an exception out of the record writer) and
// the record ended in half a line. A file size limit on rank 0 makes its
// writes fail with EFBIG as a full disk would, without root. TCP between the
// ranks: Open MPI's shared-memory segment is itself a file the limit refuses.
TEST_F(RunOutputs, AFullDiskEndsTheJobWithExitThreeAndWholeLines) {
  const std::string cmd = "timeout 120 " + mpirun(2) + " --mca btl self,tcp bash -c '" +
                          "if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then ulimit -f 16; fi; exec " + FB_BINARY +
                          " run --progress off -b 8 -e 1M -n 3 -w 1 -q --out " + path("full.jsonl") + "'";
  const auto r = run_process(cmd);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("writing results file '" + path("full.jsonl") + "': File too large (errno 27)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("signal"), std::string::npos) << r.err;  // no rank died of SIGABRT or SIGXFSZ
  EXPECT_LE(std::filesystem::file_size(path("full.jsonl")), 16u * 1024);
  const Results rec = read_results(path("full.jsonl"));  // every line whole, or this throws
  EXPECT_FALSE(rec.truncated);
  EXPECT_FALSE(rec.measurements.empty());
  EXPECT_FALSE(rec.summary);
  // The readers take what it kept: the model fits it, check says it is incomplete.
  const auto fit = run_process(std::string(FB_BINARY) + " model fit " + path("full.jsonl"));
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  const auto judged = run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --results " +
                                  path("full.jsonl") + " --out-dir " + path("judged"));
  EXPECT_EQ(judged.exit_code, 3) << judged.out << judged.err;
}

// Open succeeds, every write fails: before, the CSV's errors were ignored (exit 0).
TEST_F(RunOutputs, AnOutputThatCannotBeWrittenIsExitThreeNamingIt) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const std::string flag : {"--out", "--csv"}) {
    const auto r = run_process(run(2, small() + "-q --overwrite " + flag + " /dev/full"));
    EXPECT_EQ(r.exit_code, 3) << flag << r.err;
    EXPECT_NE(r.err.find("'/dev/full': No space left on device (errno 28)"), std::string::npos) << r.err;
  }
}

// Before: model fit, report compare and check --results refused the whole file.
TEST_F(RunOutputs, EveryReaderTakesARecordWhoseLastLineIsCut) {
  ASSERT_EQ(run_process(run(2, small() + "-q --out " + path("whole.jsonl"))).exit_code, 0);
  const std::string text = text_of(path("whole.jsonl"));
  std::ofstream(path("cut.jsonl"), std::ios::binary) << text.substr(0, text.size() - 40);
  const auto fit = run_process(std::string(FB_BINARY) + " model fit " + path("cut.jsonl"));
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.err.find("the last line is cut"), std::string::npos) << fit.err;
  const auto compare =
      run_process(std::string(FB_BINARY) + " report compare " + path("whole.jsonl") + " " + path("cut.jsonl"));
  EXPECT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.err.find("the last line is cut"), std::string::npos) << compare.err;
  const auto judged = run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --results " +
                                  path("cut.jsonl") + " --out-dir " + path("judged"));
  EXPECT_EQ(judged.exit_code, 3) << judged.out << judged.err;  // incomplete, not unreadable (2)
  // A line cut in the middle is damage: an error naming it.
  std::ofstream(path("mid.jsonl")) << text.substr(0, text.find('\n') + 1) << "{\"type\":\"meas\n"
                                   << text.substr(text.find('\n') + 1);
  const auto mid = run_process(std::string(FB_BINARY) + " model fit " + path("mid.jsonl"));
  EXPECT_EQ(mid.exit_code, 2);
  EXPECT_NE(mid.err.find("mid.jsonl:2"), std::string::npos) << mid.err;
}

TEST_F(RunOutputs, EveryRowCarriesTheRunsId) {
  ASSERT_EQ(run_process(run(2, small() + "-q --out " + path("a.jsonl") + " --csv " + path("a.csv"))).exit_code, 0);
  ASSERT_EQ(run_process(run(2, small() + "-q --out " + path("b.jsonl"))).exit_code, 0);
  const Results a = read_results(path("a.jsonl"));
  const Results b = read_results(path("b.jsonl"));
  ASSERT_FALSE(a.header.run_id.empty());
  EXPECT_NE(a.header.run_id, b.header.run_id);
  ASSERT_FALSE(a.measurements.empty());
  for (const auto& m : a.measurements) EXPECT_EQ(m.run_id, a.header.run_id);
  std::ifstream csv(path("a.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find(",run_id"), std::string::npos) << header;
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line); ++rows)
    EXPECT_EQ(line.substr(line.rfind(',') + 1), a.header.run_id) << line;
  EXPECT_EQ(rows, a.measurements.size());
}

}  // namespace
}  // namespace fb
