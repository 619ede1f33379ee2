// `fabricbench storage` end to end under mpirun, two ranks as two nodes
// (FABRICBENCH_RANKS_PER_NODE=1): the rows of each node count, the folder
// left empty however the run ends (done, SIGTERM to the ranks or to mpirun,
// SIGKILL of a rank), and bad folders refused with exit 2 naming them.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricbench/core/record.hpp"
#include "process.hpp"

namespace fb {
namespace {

namespace fs = std::filesystem;
using test::run_process;

class StorageCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("fb_storage_cli_");
    data_ = dir_ + "/data";
    fs::create_directory(data_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string record() const { return dir_ + "/r.jsonl"; }
  std::string mpirun(int ranks, const std::string& extra = "") const {
    return "timeout 120 " + test::mpirun(ranks) + " -x FABRICBENCH_RANKS_PER_NODE=1 " + extra + " " + FB_BINARY +
           " storage ";
  }
  // Small and quick: 8 MiB per rank in 1 MiB blocks, 16 files of 64 KiB.
  static std::string small() { return " --bytes 8M --block-sizes 1M --files 16 --file-bytes 64K -q "; }
  std::size_t left() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(data_), {})); }
  // The reaper lingers a moment after a killed rank: wait for it to finish.
  std::size_t left_after_a_while() const {
    for (int i = 0; i < 100 && left() > 0; ++i) usleep(100'000);
    return left();
  }
  std::string dir_;
  std::string data_;
};

TEST_F(StorageCli, MeasuresEachPatternAtEachNodeCountAndLeavesNothing) {
  const auto r = run_process(mpirun(2) + "--path " + data_ + " --local /dev/shm " + small() + "--out " + record());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(record());
  EXPECT_EQ(res.header.command, "storage");
  EXPECT_TRUE(res.complete);
  EXPECT_EQ(res.inventory.size(), 2u);
  // path: nodes 1 and 2; local: both nodes at once. Each: 2 modes x (seq w/r + small w/r).
  ASSERT_EQ(res.storage.size(), 3u * 2 * 4);
  std::set<std::string> patterns;
  for (const auto& l : res.storage) {
    patterns.insert(l.pattern);
    EXPECT_EQ(l.run_id, res.header.run_id);
    EXPECT_EQ(l.ranks, l.nodes);
    EXPECT_EQ(l.hosts.size(), static_cast<std::size_t>(l.nodes));
    EXPECT_EQ(l.node_gbps.size(), static_cast<std::size_t>(l.nodes));
    EXPECT_GT(l.aggregate_gbps, 0) << l.pattern;
    EXPECT_GT(l.latency_max_us, 0);
    EXPECT_GE(l.latency_max_us, l.latency_p99_us);
    EXPECT_TRUE(l.shared);  // one machine: both "nodes" see one filesystem
    const bool seq = l.pattern.rfind("seq", 0) == 0;
    EXPECT_EQ(l.bytes, static_cast<std::uint64_t>(l.ranks) * (seq ? 8u << 20 : 16u * (64 << 10))) << l.pattern;
    EXPECT_EQ(l.ops, static_cast<std::uint64_t>(l.ranks) * (seq ? 8u : 16u));
    if (l.target == "local") {
      EXPECT_EQ(l.fs_type, "tmpfs");
      EXPECT_EQ(l.cache, "cached") << "tmpfs is memory, and the row must say so";
      EXPECT_FALSE(l.note.empty());
      EXPECT_EQ(l.nodes, 2);
    } else {
      EXPECT_EQ(l.target, "path");
      EXPECT_EQ(l.path, data_);
    }
  }
  EXPECT_EQ(patterns, (std::set<std::string>{"seq_write", "seq_read", "small_write", "small_read"}));
  EXPECT_EQ(left(), 0u);
  // This run's reapers only (argv: __storage-reaper fabricbench-storage-RUN_ID ...): ctest runs other
  // storage tests beside this one, whose reapers are alive while their runs are.
  EXPECT_EQ(run_process("pgrep -f '[_]_storage-reaper fabricbench-storage-" + res.header.run_id + "'").exit_code, 1)
      << "no reaper outlives a finished run";
}

TEST_F(StorageCli, OnePerNodeAndChosenNodeCounts) {
  const auto r = run_process(mpirun(4) + "--path " + data_ + small() + "--one-per-node --nodes 2 --patterns seq "
                             "--direct off --out " + record());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(record());
  ASSERT_EQ(res.storage.size(), 2u);
  for (const auto& l : res.storage) {
    EXPECT_EQ(l.nodes, 2);
    EXPECT_EQ(l.ranks, 2);  // two of the four ranks
    EXPECT_EQ(l.mode, "buffered");
  }
  EXPECT_EQ(left(), 0u);
}

// Each row says how its calls were made, so a figure can be held against fio
// run with the same settings (bench/scripts/storage-vs-fio.sh); and `report
// storage` prints the rows a script reads, from the record this run wrote.
TEST_F(StorageCli, RowsCarryTheirIoSettingsAndReportStoragePrintsThem) {
  const auto r = run_process(mpirun(1) + "--path " + data_ + small() + "--direct on --out " + record());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(record());
  ASSERT_EQ(res.storage.size(), 4u);  // seq w/r, small w/r
  const std::map<std::string, std::string> sync{
      {"seq_write", "end"}, {"seq_read", "none"}, {"small_write", "file"}, {"small_read", "none"}};
  std::string expected;
  for (const auto& l : res.storage) {
    EXPECT_EQ(l.io_engine, "psync") << l.pattern;
    EXPECT_EQ(l.queue_depth, 1) << l.pattern;
    EXPECT_EQ(l.sync, sync.at(l.pattern)) << l.pattern;
    EXPECT_EQ(l.fallocate, "none") << l.pattern;
    expected += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\tpsync\t1\t{}\t{}\t{}\t{}\t{}\t{}\n", l.target, l.pattern,
                            l.mode, l.nodes, l.block_bytes, l.file_bytes, l.files, l.cache, l.sync, l.aggregate_gbps,
                            l.fs_type, l.shared ? "true" : "false", l.bytes, fmt::join(l.hosts, ","));
    EXPECT_FALSE(l.fs_type.empty()) << l.pattern;
    EXPECT_EQ(l.hosts.size(), 1u) << l.pattern;  // one node: its host
  }
  const auto rows = run_process(std::string(FB_BINARY) + " report storage " + record());
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_EQ(rows.out, expected);
  // The columns in the documented order, spelled out once.
  EXPECT_EQ(
      rows.out.find("path\tseq_read\tdirect\t1\t1048576\t8388608\t1\t" + res.storage[1].cache + "\tpsync\t1\tnone\t"),
      rows.out.find('\n') + 1)
      << rows.out;
}

// check's storage rules on the record `storage --out` wrote: a floor the
// disk clears passes (exit 0), one it cannot fails (exit 1) with the figure;
// the same profile run by check itself is refused (exit 2: it would measure
// no storage line) with how to judge it instead.
TEST_F(StorageCli, CheckJudgesTheStorageRecordWithItsRules) {
  const auto r = run_process(mpirun(2) + "--path " + data_ + small() + "--patterns seq --direct on --out " + record());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto profile = [&](const std::string& floor) {
    const std::string path = dir_ + "/fs-" + floor.substr(0, floor.find(' ')) + ".yaml";
    std::ofstream(path) << "name: fs\nbackend: mpi\nrules:\n"
                        << "  - {name: read at 2 nodes, kind: storage, pattern: seq_read, nodes: 2, min: " << floor
                        << "}\n  - {name: each node, kind: storage, nodes: 2, metric: node_min_gbps, min: " << floor
                        << "}\n";
    return path;
  };
  const std::string check = std::string(FB_BINARY) + " check --out-dir " + dir_ + "/out --overwrite --profile ";
  const auto pass = run_process(check + profile("1 MB/s") + " --results " + record());
  EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;
  EXPECT_NE(pass.out.find("path seq_read at 2 nodes (ext4"), std::string::npos) << pass.out;
  const auto fail = run_process(check + profile("1000 TB/s") + " --results " + record());
  EXPECT_EQ(fail.exit_code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("FAIL"), std::string::npos) << fail.out;
  const auto live = run_process("timeout 60 " + test::mpirun(2) + " " + check + profile("1 MB/s"));
  EXPECT_EQ(live.exit_code, 2) << live.err;
  EXPECT_NE(live.err.find("has storage rules, which judge a storage record"), std::string::npos) << live.err;
}

struct Interrupt {
  const char* name;
  const char* kill;  // a shell command; $m is mpirun's pid
  const char* timeout;
};

void PrintTo(const Interrupt& i, std::ostream* os) { *os << i.kill << " (--timeout " << i.timeout << ")"; }

class StorageInterrupted : public StorageCli, public ::testing::WithParamInterface<Interrupt> {};

// Big enough to be caught mid-run: many small files while the signal comes.
TEST_P(StorageInterrupted, LeavesTheFolderEmpty) {
  const std::string cmd = mpirun(2) + "--path " + data_ + " --bytes 64M --block-sizes 1M --files 4000 --file-bytes 16K " +
                          "--patterns small,seq -q --timeout " + GetParam().timeout + " --out " + record() +
                          " & m=$!; for i in $(seq 600); do find " + data_ +
                          " -name 'shard*' 2>/dev/null | grep -q . && break; sleep 0.05; done; " + GetParam().kill +
                          "; wait $m";
  const auto r = run_process("sh -c '" + cmd + "'");
  EXPECT_NE(r.exit_code, 0) << "the run was meant to be cut short: " << r.err;
  EXPECT_EQ(left_after_a_while(), 0u) << "left in " << data_ << ": " << run_process("find " + data_).out;
  const Results res = read_results(record());
  EXPECT_NE(res.status, "complete");
}

INSTANTIATE_TEST_SUITE_P(
    Signals, StorageInterrupted,
    ::testing::Values(Interrupt{"SigtermToTheRanks", "kill -TERM $(pgrep -P $m)", "auto"},
                      Interrupt{"SigtermToTheRanksWithoutWatchdog", "kill -TERM $(pgrep -P $m)", "0"},
                      Interrupt{"SigtermToMpirun", "kill -TERM $m", "auto"},
                      Interrupt{"SigintToMpirun", "kill -INT $m", "0"},
                      Interrupt{"SigkillOfARank", "kill -KILL $(pgrep -P $m | head -1)", "auto"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(StorageCli, ASignalClosesTheRecordAsKilled) {
  // SIGTERM to mpirun ($m is timeout, its child mpirun), as Ctrl-C does:
  // mpirun SIGTERMs the ranks and SIGKILLs the rest as soon as one has died,
  // so a rank must not die of the signal before rank 0 sealed the record.
  const std::string cmd = mpirun(2) + "--path " + data_ + " --bytes 64M --block-sizes 1M --files 4000 --file-bytes 16K " +
                          "--patterns small -q --out " + record() + " & m=$!; for i in $(seq 600); do find " + data_ +
                          " -name 'shard*' 2>/dev/null | grep -q . && break; sleep 0.05; done; kill -TERM $(pgrep -P $m); wait $m";
  const auto r = run_process("sh -c '" + cmd + "'");
  const Results res = read_results(record());
  EXPECT_EQ(res.status, "killed") << r.err;
  ASSERT_TRUE(res.summary);
  EXPECT_EQ(res.summary->exit_code, 128 + 15);
  EXPECT_EQ(left_after_a_while(), 0u);
}

// The quick start's workload prices its data loading against a storage
// record this binary wrote: `model data` as docs/model.md shows it.
TEST_F(StorageCli, TheShippedWorkloadPricesItsDataLoadingFromARecordTheBinaryWrote) {
  const auto r = run_process(mpirun(2) + "--path " + data_ + small() + "--direct off --out " + record());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string workload = std::string(FB_SOURCE_DIR) + "/profiles/workloads/llama-7b-zero1-2x8-h100.yaml";
  const auto priced = run_process(std::string(FB_BINARY) + " model data -w " + workload + " --storage " + record() +
                                  " --network 8x400g-ndr-ib --format json");
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const auto j = nlohmann::json::parse(priced.out);
  ASSERT_EQ(j["data_loading"].size(), 2u) << priced.out;  // the two node counts the record measured
  for (const auto& row : j["data_loading"]) {
    EXPECT_GT(row["needed_gbps"].get<double>(), 0) << row.dump();
    EXPECT_GT(row["shared_gbps"].get<double>(), 0) << row.dump();
  }
}

struct BadFolder {
  const char* name;
  const char* args;     // {d} is the test's folder
  const char* message;  // in stderr, {d} likewise
};

std::string with_dir(std::string text, const std::string& dir) {
  for (auto at = text.find("{d}"); at != std::string::npos; at = text.find("{d}")) text.replace(at, 3, dir);
  return text;
}

void PrintTo(const BadFolder& b, std::ostream* os) { *os << "'" << b.args << "'"; }

class StorageRefuses : public StorageCli, public ::testing::WithParamInterface<BadFolder> {};

TEST_P(StorageRefuses, WithExitTwoAndOneMessageNamingIt) {
  std::ofstream(dir_ + "/file") << "x";
  const auto r = run_process(mpirun(2) + with_dir(GetParam().args, dir_) + " -q");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(with_dir(GetParam().message, dir_)), std::string::npos) << r.err;
  const auto first = r.err.find("fabricbench storage:");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fabricbench storage:", first + 1), std::string::npos) << "one message: " << r.err;
  EXPECT_EQ(left(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StorageRefuses,
    ::testing::Values(
        BadFolder{"Missing", "--path {d}/missing", "--path '{d}/missing' does not exist"},
        BadFolder{"AFile", "--path {d}/file", "--path '{d}/file' is not a folder"},
        BadFolder{"LocalMissing", "--path {d}/data --local {d}/nolocal", "--local '{d}/nolocal' does not exist"},
        BadFolder{"NoSpace", "--path {d}/data --bytes 512T --block-sizes 1M",
                  "--path '{d}/data' has "},
        BadFolder{"TooManyNodes", "--path {d}/data --nodes 3", "--nodes 3: the job has 2 nodes"},
        BadFolder{"BlockNotWhole", "--path {d}/data --block-sizes 5000", "--block-sizes 4.88 KiB: from 4 KiB"},
        BadFolder{"SamePathTwice", "--path {d}/data --local {d}/data", "--local is the same folder as --path"}),
    [](const auto& info) { return std::string(info.param.name); });

// Root only: a read-only mount, a filesystem too small, and a node whose
// --path is a filesystem of its own, each in a private mount namespace.
class StorageAsRoot : public StorageCli {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting needs root";
    StorageCli::SetUp();
  }
};

TEST_F(StorageAsRoot, AReadOnlyMountIsRefusedNamingIt) {
  const auto r = run_process("unshare -m sh -c 'mount -t tmpfs -o ro,size=1m tmpfs " + data_ + " && " + mpirun(2) +
                             "--path " + data_ + " -q'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--path '" + data_ + "' is on a read-only mount"), std::string::npos) << r.err;
}

TEST_F(StorageAsRoot, TheSpaceNeededAtOnceIsCheckedFirst) {
  // 2 ranks x 4 MiB do not fit in 6 MiB; nothing is written.
  const auto r = run_process("unshare -m sh -c 'mount -t tmpfs -o size=6m tmpfs " + data_ + " && " + mpirun(2) +
                             "--path " + data_ + " --bytes 4M --block-sizes 1M --files 4 --file-bytes 64K -q'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("has 6 MiB free but the run holds 8 MiB there at once (2 ranks x 4 MiB"), std::string::npos)
      << r.err;
}

TEST_F(StorageAsRoot, ANodeWithAFilesystemOfItsOwnIsNotShared) {
  // Rank 1 ("node" 1) sees a tmpfs of its own at the path.
  const std::string rank1 = "unshare -m sh -c \"mount -t tmpfs -o size=64m tmpfs " + data_ + " && exec " + FB_BINARY +
                            " storage --path " + data_ + small() + " --patterns seq --direct off --nodes 2 --out " +
                            record() + "\"";
  const std::string rank0 = std::string(FB_BINARY) + " storage --path " + data_ + small() +
                            " --patterns seq --direct off --nodes 2 --out " + record();
  const auto r = run_process("timeout 120 " + test::mpirun(2) + " -x FABRICBENCH_RANKS_PER_NODE=1 sh -c '" +
                             "if [ $OMPI_COMM_WORLD_RANK = 1 ]; then " + rank1 + "; else exec " + rank0 + "; fi'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(record());
  ASSERT_FALSE(res.storage.empty());
  for (const auto& l : res.storage) EXPECT_FALSE(l.shared);
  EXPECT_EQ(left(), 0u);
}

}  // namespace
}  // namespace fb
