// What a run tells about itself: --version, the record header's build
// identity, and a progress line only where a person is watching.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

TEST(Identity, VersionNamesTheCommitTheBuildAndEveryBackend) {
  const auto r = run_process(std::string(FB_BINARY) + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"git commit   ", "build        ", "MPI library  Open MPI", "built with   CUDA",
                           "    mpi       usable", "    nccl      "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
  // The commit is the checkout's own (the test runs from the source tree).
  const auto head = run_process("git -C " + std::string(FB_SOURCE_DIR) + " rev-parse --short=12 HEAD");
  if (head.exit_code == 0 && head.out.size() >= 12) {
    EXPECT_NE(r.out.find(head.out.substr(0, 12)), std::string::npos) << r.out;
  }
}

TEST(Identity, TheRecordHeaderCarriesTheBuild) {
  const std::string dir = test::make_temp_dir("fb_identity_");
  const auto r = run_process(mpirun(2) + " " + FB_BINARY + " run --progress off -q -e 64 -n 2 -w 0 --ops all_reduce " +
                             "--out " + dir + "/r.jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir + "/r.jsonl");
  std::string first;
  std::getline(in, first);
  const auto header = nlohmann::json::parse(first);
  ASSERT_TRUE(header.contains("build")) << first;
  EXPECT_EQ(header["build"]["version"], header["version"]);
  EXPECT_TRUE(header["build"]["git_dirty"].is_boolean());
  EXPECT_FALSE(header["build"]["compiler"].get<std::string>().empty());
  std::filesystem::remove_all(dir);
}

TEST(Progress, AutoWritesNoProgressLineIntoRedirectedOutput) {
  // mpirun hands rank 0 a pseudo-terminal for stdout whatever its own output
  // is; `--progress auto` took that for a person watching and wrote "\r\e[K"
  // lines into the log. Outside CI and batch jobs, with a terminal type set.
  const auto r = run_process("env -u CI -u SLURM_JOB_ID -u PBS_JOBID -u LSB_JOBID TERM=xterm " + mpirun(2) + " " +
                             FB_BINARY + " run -e 1K -n 2 -w 0 --ops all_reduce");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
  // `on` still shows it: the test can see a progress line when there is one.
  const auto on = run_process(mpirun(2) + " " + FB_BINARY + " run --progress on -e 1K -n 2 -w 0 --ops all_reduce");
  EXPECT_NE(on.err.find('\r'), std::string::npos) << on.err;
}

}  // namespace
}  // namespace fb
