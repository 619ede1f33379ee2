// Bad input that used to crash, hang or exit 3, through the real binary under
// mpirun: each must end with exit 2 and one message naming the input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

struct Case {
  const char* name;
  const char* args;     // after "fabricbench run --progress off"
  const char* message;  // must be in stderr
  const char* not_said = nullptr;  // must not be
};

void PrintTo(const Case& c, std::ostream* os) { *os << "'" << c.args << "'"; }

class RunRefuses : public ::testing::TestWithParam<Case> {};

TEST_P(RunRefuses, WithExitTwoAndOneMessage) {
  // `timeout` turns a hang into exit 124: a hang fails the test instead of stalling it.
  const auto r = run_process("timeout 60 " + mpirun(2) + " " + FB_BINARY + " run --progress off " + GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  if (GetParam().not_said) {
    EXPECT_EQ(r.err.find(GetParam().not_said), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::broken_message(r.err, GetParam().args), "") << r.err;
  const auto first = r.err.find("fabricbench run:");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fabricbench run:", first + 1), std::string::npos) << "one message, from rank 0: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RunRefuses,
    ::testing::Values(Case{"TimeBudgetNan", "--time-budget nan", "--time-budget: nan is not a finite number"},
                      // Was std::bad_alloc and exit 3: 2^63 bytes wrapped to a small need in the fit check.
                      Case{"MaxBytesNear2To63", "-b 8 -e 9223372036854775808 --ops all_reduce", "host memory"},
                      Case{"StepBytesAndStepFactor", "-i 8 -f 2", "--stepbytes 8 and --stepfactor 2 together"},
                      Case{"EmptyOut", "--out ''", "empty path"},
                      Case{"InjectKeyTwice", "--inject hang:rank=1,rank=0", "'rank' is given twice"},
                      Case{"InjectCountBeyondTheBuffer", "-b 8 -e 64 --inject corrupt:rank=1,count=1000",
                           "count=1000 is more"},
                      // Was "elements per call exceed MPI's int count": the memory is what does not fit.
                      Case{"SixteenGiBOnTheHost", "-b 16G -e 16G --ops all_reduce", "host memory", "int count"}),
    [](const auto& info) { return info.param.name; });

std::string two_commands(const std::string& a, const std::string& b) {
  return "timeout 60 " + std::string(FB_MPIEXEC) + " --allow-run-as-root --oversubscribe --bind-to none -np 1 " +
         FB_BINARY + " " + a + " : -np 1 " + FB_BINARY + " " + b;
}

TEST(Launch, RanksStartedWithDifferentSubcommandsAreRefused) {
  // Before: `run : topo` hung, `run : check` crashed in wait_quiet.
  for (const char* other : {"topo", "check --profile local-smoke", "pairs", "step --workload x.yaml"}) {
    const auto r = run_process(two_commands("run --progress off -n 2 -e 1K", other));
    EXPECT_EQ(r.exit_code, 2) << other << ": " << r.err;
    EXPECT_NE(r.err.find("but rank 0 runs 'fabricbench run'"), std::string::npos) << other << ": " << r.err;
  }
}

TEST(Launch, OptionsThatDifferNameTheOption) {
  const auto r = run_process(two_commands("run --progress off -n 5 -e 1K", "run --progress off -n 6 -e 1K"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--iters is 5 on rank 0 but 6 here"), std::string::npos) << r.err;
  const auto topo = run_process(two_commands("topo -q", "topo -q --strict"));
  EXPECT_EQ(topo.exit_code, 2) << topo.err;
  EXPECT_NE(topo.err.find("--strict is false on rank 0 but true here"), std::string::npos) << topo.err;
  const auto check = run_process(two_commands("check --profile local-smoke", "check --profile generic-spec"));
  EXPECT_EQ(check.exit_code, 2) << check.err;
  EXPECT_NE(check.err.find("--profile is"), std::string::npos) << check.err;
}

// Input files of every command that reads one: a device that never ends, a
// folder, a FIFO no one writes, a file or a pipe over the ceiling. Before,
// /dev/zero was read until memory ran out, a FIFO waited forever and a
// folder ended with exit 3 and a raw exception. Each is exit 2 at once,
// naming the input and the fix; `timeout` turns a hang into 124.
class InputFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_bad_input_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static test::ProcessResult fb(const std::string& args, const std::string& env = "") {
    return run_process("timeout 60 env " + env + " " + std::string(FB_BINARY) + " " + args);
  }
  std::string dir_;
};

// The check the suite holds every message to must be able to fail: the
// messages issue 35 found, and sentences that must pass.
TEST(MessageShapes, TheMessagesThatReadAsBugsAreFound) {
  for (const char* bug : {"this run measured no any op rows (scopes measured for it: )", "busbw +601677.4% of spec",
                          "bandwidth inf GB/s", "median -nan us", "no rows ()"})
    EXPECT_NE(test::broken_message(bug), "") << bug;
  for (const char* fine : {"--scope inter measured nothing: one node (the inter scope needs two)",
                           "busbw 12.5% below the spec", "Info: 3 lines were not read", "nanoseconds"})
    EXPECT_EQ(test::broken_message(fine), "") << fine;
  EXPECT_EQ(test::broken_message("--time-budget nan: not a number", "run --time-budget nan"), "")
      << "the user's own words are repeated back";
}

TEST_F(InputFiles, DevicesFoldersAndFifosAreRefusedAtOnceNamingTheInput) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string profile = std::string(FB_SOURCE_DIR) + "/profiles/local-smoke.yaml";
  const std::string out = " --out " + path("out.jsonl");
  struct Input {
    std::string args, message;
  };
  for (const Input& c : std::vector<Input>{
           {"report nccl-log /dev/zero", "report nccl-log '/dev/zero': not a regular file"},
           {"report nccl-log " + dir_, "report nccl-log '" + dir_ + "': is a folder; give a file"},
           {"report nccl-log " + fifo, "or pipe it in and give '-'"},
           {"report import nccl-tests /dev/zero" + out, "report import nccl-tests '/dev/zero': not a regular file"},
           {"report import nccl-tests " + fifo + out, "'" + fifo + "': not a regular file"},
           {"report import nccl-tests " + dir_ + out, "File is actually a directory"},  // CLI11's check
           {"report html /dev/zero -o " + path("p.html"), "results file '/dev/zero': not a regular file"},
           {"report scopes " + fifo, "results file '" + fifo + "': not a regular file"},
           {"report storage " + fifo, "results file '" + fifo + "': not a regular file"},
           {"report rows " + fifo, "results file '" + fifo + "': not a regular file"},
           {"report steps /dev/zero", "results file '/dev/zero': not a regular file"},
           {"report status " + dir_, "results file '" + dir_ + "': is a folder"},
           {"report lines /dev/zero", "results file '/dev/zero': not a regular file"},
           {"report compare " + dir_ + " " + dir_, "results file '" + dir_ + "': is a folder"},
           {"check --progress off --profile " + profile + " --results /dev/zero", "results file '/dev/zero'"},
           {"check --progress off --profile " + dir_, "--profile '" + dir_ + "': is a folder"},
           {"check --progress off --profile /dev/zero", "--profile '/dev/zero': not a regular file"},
           {"model fit " + dir_, "is a folder"},
       }) {
    const auto r = fb(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(test::broken_message(r.err, c.args), "") << c.args << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path("out.jsonl"))) << "nothing imported, nothing written";
}

TEST_F(InputFiles, AFileOrAPipeOverTheCeilingIsRefusedSayingHowToRaiseIt) {
  const std::string big = path("big.log");
  std::ofstream(big) << std::string(2 * 1024 * 1024 + 1, 'x');
  const auto file = fb("report nccl-log " + big, "FABRICBENCH_MAX_INPUT_MIB=1");
  EXPECT_EQ(file.exit_code, 2) << file.err;
  EXPECT_NE(file.err.find("'" + big + "': is 3 MiB, more than the 1 MiB read at most; raise the ceiling with "
                          "FABRICBENCH_MAX_INPUT_MIB=3"),
            std::string::npos)
      << file.err;
  // A pipe has no size to check first: it is read up to the ceiling, then refused.
  const auto pipe = run_process("head -c 5000000 /dev/zero | FABRICBENCH_MAX_INPUT_MIB=1 timeout 60 " +
                                std::string(FB_BINARY) + " report nccl-log -");
  EXPECT_EQ(pipe.exit_code, 2) << pipe.err;
  EXPECT_NE(pipe.err.find("report nccl-log '-': more than the 1 MiB read at most"), std::string::npos) << pipe.err;
  // Under the default ceiling the same file is read (and has no NCCL lines).
  const auto read = fb("report nccl-log " + big);
  EXPECT_EQ(read.exit_code, 2) << read.err;
  EXPECT_NE(read.err.find("no NCCL lines"), std::string::npos) << read.err;
  const auto junk = fb("report nccl-log " + big, "FABRICBENCH_MAX_INPUT_MIB=1G");
  EXPECT_EQ(junk.exit_code, 2) << junk.err;
  EXPECT_NE(junk.err.find("FABRICBENCH_MAX_INPUT_MIB='1G': not a whole number of MiB above 0"), std::string::npos)
      << junk.err;
}

// The census of input files: every reader a command has (records, foreign
// text, profiles and workloads) given an empty file, binary junk, a record
// cut mid-line, a file of the wrong kind, and its own output as input. Each
// is refused with exit 2 and one message naming the input, except a record
// cut short, which is read up to its last whole line as a crash leaves it
// (exit 0, or 2 where the whole lines hold no row the command needs; check
// judges it a run that could not finish, exit 3).
TEST_F(InputFiles, EveryReaderRefusesEmptyBinaryWrongKindAndItsOwnOutput) {
  const std::string record = path("record.jsonl");
  const auto made = run_process("timeout 60 " + std::string(FB_BINARY) +
                                " run --progress off -b 8 -e 1K --ops all_reduce --out " + record + " </dev/null");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string profile = std::string(FB_SOURCE_DIR) + "/profiles/local-smoke.yaml";
  const std::string workload = std::string(FB_SOURCE_DIR) + "/profiles/workloads/host-dp-2ranks.yaml";
  std::string text;
  {
    std::ifstream in(record);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path("empty"));
  {
    std::ofstream bin(path("binary"), std::ios::binary);
    for (int i = 0; i < 4096; ++i) bin.put(static_cast<char>((i * 7919 + 13) % 256));
  }
  std::ofstream(path("cut.jsonl")) << text.substr(0, text.size() * 2 / 3);
  struct Reader {
    std::string command;  // {} stands for the input
    std::string wrong_kind;
    std::set<int> cut_exit;  // a record cut mid-line; empty: not a record reader
  };
  const std::vector<Reader> readers{
      {"report html {} -o " + path("page.html"), profile, {0, 2}},
      {"report scopes {}", profile, {0, 2}},
      {"report storage {}", profile, {2}},  // the record is a `run`'s: no storage rows, exit 2 cut or whole
      {"report rows {}", profile, {0, 2}},
      {"report steps {}", profile, {2}},   // a `run`'s record: no step lines, cut or whole
      {"report status {}", profile, {0}},  // cut: "incomplete" and why, exit 0 (a status, not a refusal)
      {"report lines {}", profile, {0}},   // cut: the whole lines, a cut last line dropped and said so
      {"report compare {} " + record, profile, {0, 2}},
      {"check --progress off --out-dir " + path("check") + " --profile " + profile + " --results {}", profile, {3}},
      {"model fit {}", profile, {0, 2}},
      {"report nccl-log {}", record, {}},
      {"report import nccl-tests {} --out " + path("imported.jsonl"), record, {}},
      {"check --progress off --out-dir " + path("check") + " --profile {}", record, {}},
      {"model step -w {}", record, {}},
  };
  std::map<int, int> by_exit_code;
  int cases = 0;
  const auto probe = [&](const std::string& command, const std::string& input, std::set<int> allowed) {
    std::string args = command;
    args.replace(args.find("{}"), 2, input);
    const auto r = fb(args + " </dev/null");
    ++cases;
    ++by_exit_code[r.exit_code];
    EXPECT_TRUE(allowed.count(r.exit_code)) << args << ": exit " << r.exit_code << ": " << r.err;
    if (r.exit_code == 2) {
      EXPECT_NE(r.err.find(input), std::string::npos) << args << ": " << r.err;
    }
    EXPECT_EQ(test::broken_message(r.err, args), "") << args << ": " << r.err;
  };
  for (const Reader& reader : readers) {
    for (const std::string& bad : {path("empty"), path("binary"), reader.wrong_kind}) probe(reader.command, bad, {2});
    if (!reader.cut_exit.empty()) probe(reader.command, path("cut.jsonl"), reader.cut_exit);
  }
  // Its own output as input: refused before the only record is overwritten.
  for (const std::string& same :
       {"report html {} -o " + record + " --overwrite", "report import nccl-tests {} --out " + record + " --overwrite"})
    probe(same, record, {2});
  {
    std::ifstream in(record);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text) << "the record an output named was changed";
  }
  std::string census;
  for (const auto& [code, n] : by_exit_code) census += fmt::format(" exit {}: {}", code, n);
  std::printf("census of %d input-file cases:%s\n", cases, census.c_str());
}

// A memory cgroup of this test's own (v2, or v1's memory controller), 3 GiB:
// `run -b 4G` in it must be refused before it allocates, as MemAvailable alone
// let it through to an OOM kill. Skips, saying why, where it cannot make one.
class MemoryCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    if (geteuid() != 0) GTEST_SKIP() << "needs root to create a memory cgroup";
    const std::string name = "fabricbench-test-" + std::to_string(getpid());
    if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
      dir_ = "/sys/fs/cgroup/" + name;
      limit_file_ = "memory.max";
    } else if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
      dir_ = "/sys/fs/cgroup/memory/" + name;
      limit_file_ = "memory.limit_in_bytes";
    } else {
      GTEST_SKIP() << "no cgroup memory controller mounted at /sys/fs/cgroup";
    }
    std::error_code ec;
    if (!fs::create_directory(dir_, ec) || !std::ofstream(dir_ + "/" + limit_file_).good())
      GTEST_SKIP() << "cannot create a memory cgroup at " << dir_ << ": " << ec.message();
    std::ofstream(dir_ + "/" + limit_file_) << (3ull << 30);
  }
  void TearDown() override {
    if (!dir_.empty()) ::rmdir(dir_.c_str());  // empty once the job's processes are gone
  }
  std::string dir_;
  std::string limit_file_;
};

TEST_F(MemoryCgroup, ALimitSmallerThanMemAvailableIsTheFigure) {
  const auto r = run_process("timeout 60 sh -c 'echo $$ > " + dir_ + "/cgroup.procs && exec " + mpirun(2) + " " +
                             FB_BINARY + " run --progress off -b 1G -e 1G --ops all_reduce -d double'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("host memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("memory cgroup"), std::string::npos) << r.err;
}

// The census of numeric flags: every FLOAT and INT flag of every command (as
// its --help lists them), and the sizes, timeouts and counts given as text,
// each given -1, nan, 1e999 and 12junk: exit 2 and one message naming the
// flag, never a run, a crash, a hang or another exit code; and 0, which some
// flags take (exit 0) and others refuse (exit 2, naming the flag). The table
// must hold every numeric flag --help shows, so a new flag joins the census
// or fails it.
struct FlagProbe {
  std::string command;             // with its subcommand
  std::string base;                // arguments that make a run with a valid value short
  std::vector<std::string> flags;  // long names
};

const std::vector<FlagProbe>& flag_probes() {
  static const std::string workload = std::string(FB_SOURCE_DIR) + "/profiles/workloads/host-dp-2ranks.yaml";
  static const std::vector<FlagProbe> probes{
      {"run",
       "--progress off --ops all_reduce -e 8",
       {"--minbytes", "--stepfactor", "--iters", "--warmup_iters", "--root", "--median-ci", "--time-budget", "--window",
        "--device", "--peers", "--timeout", "--duration", "--ngpus", "--nthreads", "--cudagraph"}},
      {"run", "--progress off --ops all_reduce -b 8", {"--maxbytes", "--stepbytes"}},
      {"pairs",
       "--progress off",
       {"--window", "--iters", "--warmup_iters", "--time-budget", "--threshold", "--expect-gbps", "--size",
        "--latency-size", "--timeout"}},
      {"gemm", "", {"--size", "--iters", "--warmup_iters", "--device"}},
      {"step", "-w " + workload, {"--steps", "--warmup", "--device", "--gemm-size", "--timeout"}},
      {"storage", "--path /nonexistent-fb-census", {"--files", "--nodes"}},
      {"diagnose", "--seconds 0", {"--interval", "--pid"}},
      {"diagnose", "", {"--seconds"}},
      {"model step", "-w " + workload, {"--measured-step-s"}},
      {"model scale", "-w " + workload, {"--nodes", "--exposed-target"}},
      // README.md: a file that exists (the flags are refused before it is read).
      {"report import nccl-tests",
       std::string(FB_SOURCE_DIR) + "/README.md --out /nonexistent-fb-census.jsonl",
       {"--ranks"}},
  };
  return probes;
}

// The long names of the FLOAT and INT flags `fabricbench COMMAND --help` lists.
std::set<std::string> numeric_flags_in_help(const std::string& command) {
  const auto help = run_process(std::string(FB_BINARY) + " " + command + " --help </dev/null");
  std::set<std::string> out;
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string names, type;
    words >> names >> type;
    if (names.rfind("-", 0) != 0 || (type.rfind("FLOAT", 0) != 0 && type.rfind("INT", 0) != 0)) continue;
    const auto dashes = names.find("--");
    if (dashes != std::string::npos) out.insert(names.substr(dashes));
  }
  return out;
}

TEST(Census, EveryNumericFlagInHelpIsProbed) {
  std::map<std::string, std::set<std::string>> probed;
  for (const auto& p : flag_probes()) probed[p.command].insert(p.flags.begin(), p.flags.end());
  std::size_t seen = 0;
  for (const char* command : {"run", "pairs", "topo", "gemm", "step", "check", "storage", "diagnose", "model fit",
                              "model step", "model scale", "model memory", "model quotes", "model data", "report html",
                              "report compare", "report scopes", "report storage", "report nccl-log"}) {
    for (const std::string& flag : numeric_flags_in_help(command)) {
      ++seen;
      EXPECT_TRUE(probed[command].count(flag))
          << "fabricbench " << command << " " << flag << " is numeric: add it to flag_probes()";
    }
  }
  EXPECT_GE(seen, 25u) << "--help lists fewer numeric flags than the census knows: is the parse of --help broken?";
}

TEST(Census, NonsenseInEveryNumericFlagIsExitTwoNamingTheFlag) {
  struct Probe {
    std::string args, flag;
    bool may_run = false;  // a value the flag may take: exit 0 allowed
  };
  std::vector<Probe> probes;
  for (const auto& p : flag_probes())
    for (const std::string& flag : p.flags)
      for (const char* value : {"0", "-1", "nan", "1e999", "12junk"})
        probes.push_back({p.command + " " + p.base + " " + flag + " " + value, flag, value == std::string("0")});
  // Alone (MPI's singleton): 0.5 s a command instead of 2.5 under mpirun; three at a time.
  std::vector<test::ProcessResult> results(probes.size());
  for (std::size_t first = 0; first < probes.size(); first += 3) {
    std::vector<std::future<test::ProcessResult>> batch;
    for (std::size_t i = first; i < std::min(first + 3, probes.size()); ++i)
      batch.push_back(std::async(std::launch::async, [&, i] {
        return run_process("timeout 60 " + std::string(FB_BINARY) + " " + probes[i].args + " </dev/null");
      }));
    for (std::size_t i = 0; i < batch.size(); ++i) results[first + i] = batch[i].get();
  }
  std::map<int, int> by_exit_code;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const auto& r = results[i];
    ++by_exit_code[r.exit_code];
    EXPECT_EQ(test::broken_message(r.err, probes[i].args), "") << probes[i].args << ": " << r.err;
    if (probes[i].may_run && r.exit_code == 0) continue;
    EXPECT_EQ(r.exit_code, 2) << probes[i].args << ": " << r.err;
    if (probes[i].may_run) continue;  // 0 may be refused for the layout first (pairs on one node)
    EXPECT_NE(r.err.find(probes[i].flag), std::string::npos) << probes[i].args << ": " << r.err;
  }
  std::string census;
  for (const auto& [code, n] : by_exit_code) census += fmt::format(" exit {}: {}", code, n);
  std::printf("census of %zu numeric flag probes:%s\n", probes.size(), census.c_str());
}

}  // namespace
}  // namespace fb
