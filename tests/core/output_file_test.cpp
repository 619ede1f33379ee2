// Opening and writing outputs (core/output_file.hpp, core/csv.hpp): no link
// followed, no file replaced without --overwrite, a line whole or not at all
// when the disk fills, errors that name the file and errno instead of
// exceptions, RFC 4180 CSV fields.
#include "fabricbench/core/output_file.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "fabricbench/core/csv.hpp"
#include "fabricbench/core/record.hpp"

namespace fb {
namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fb_output_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  static std::string text_of(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  fs::path dir_;
};

// While alive: writes beyond `bytes` fail with EFBIG (SIGXFSZ ignored, as
// fabricbench's main() does), the way a full disk fails them, without root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_signal_ = std::signal(SIGXFSZ, SIG_IGN);
    ok_ = ::getrlimit(RLIMIT_FSIZE, &previous_) == 0;
    rlimit limit = previous_;
    limit.rlim_cur = bytes;
    ok_ = ok_ && ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_signal_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit previous_{};
  void (*previous_signal_)(int) = nullptr;
  bool ok_ = false;
};

TEST_F(OutputFile, AnExistingFileNeedsOverwriteAndALinkIsNeverFollowed) {
  std::ofstream(path("old")) << "old\n";
  std::ofstream(path("target")) << "precious\n";
  fs::create_symlink(path("target"), path("link"));
  EXPECT_NE(check_output(path("old"), "--out", false).find("exists: give --overwrite"), std::string::npos);
  EXPECT_EQ(check_output(path("old"), "--out", true), "");
  for (bool overwrite : {false, true})
    EXPECT_NE(check_output(path("link"), "--out", overwrite).find("symbolic link"), std::string::npos);
  std::string error;
  EXPECT_LT(open_output(path("old"), false, error), 0);
  EXPECT_NE(error.find("exists"), std::string::npos) << error;
  EXPECT_LT(open_output(path("link"), true, error), 0);  // a link planted after the check: still refused
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  EXPECT_EQ(text_of(path("target")), "precious\n");
  LineFile f("results file");
  EXPECT_NE(f.open(path("link"), true), "");
  EXPECT_EQ(text_of(path("target")), "precious\n");
}

// Two runs with the same --out --overwrite once interleaved their lines into
// one corrupt record. A file another process is writing (its lock held, here
// by a descriptor of this test's) is refused by the check before a run and
// by the open itself (a run that started in between), and is not emptied.
TEST_F(OutputFile, AFileAnotherRunIsWritingIsNeitherEmptiedNorShared) {
  std::ofstream(path("rec.jsonl")) << "the first run's lines\n";
  const int holder = ::open(path("rec.jsonl").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
  const std::string check = check_output(path("rec.jsonl"), "--out", true);
  EXPECT_NE(check.find("--out '" + path("rec.jsonl") + "' is being written by another fabricbench right now"),
            std::string::npos)
      << check;
  std::string error;
  EXPECT_LT(open_output(path("rec.jsonl"), true, error), 0);
  EXPECT_NE(error.find("wait for that run to end, or give another path"), std::string::npos) << error;
  EXPECT_EQ(text_of(path("rec.jsonl")), "the first run's lines\n");
  ::close(holder);  // the first run ends: the file is free
  EXPECT_EQ(check_output(path("rec.jsonl"), "--out", true), "");
  const int fd = open_output(path("rec.jsonl"), true, error);
  ASSERT_GE(fd, 0) << error;
  EXPECT_EQ(text_of(path("rec.jsonl")), "") << "--overwrite empties it once the lock is this run's";
  // Held until closed: a third writer is refused meanwhile.
  EXPECT_LT(open_output(path("rec.jsonl"), true, error), 0);
  ::close(fd);
  // A device is never locked: any number of runs may write to /dev/null.
  const int a = open_output("/dev/null", true, error), b = open_output("/dev/null", true, error);
  EXPECT_GE(a, 0);
  EXPECT_GE(b, 0) << error;
  ::close(a);
  ::close(b);
}

TEST_F(OutputFile, TwoOutputsOnOneFileAreRefused) {
  fs::create_directories(dir_ / "sub");
  EXPECT_EQ(check_outputs({{path("a"), "--out"}, {path("b"), "--csv"}, {"", "--unused"}}, false), "");
  const std::string same = check_outputs({{path("a"), "--out"}, {path("a"), "--csv"}}, false);
  EXPECT_NE(same.find("--out and --csv both name"), std::string::npos) << same;
  const std::string spelled = check_outputs({{path("a"), "--out"}, {(dir_ / "sub/../a").string(), "--csv"}}, false);
  EXPECT_NE(spelled.find("both name"), std::string::npos) << spelled;
}

TEST_F(OutputFile, AFolderOthersCanWriteIsRefusedUnlessSticky) {
  EXPECT_EQ(check_output_dir(dir_.string(), "--out-dir"), "");
  ::chmod(dir_.c_str(), 0777);
  EXPECT_NE(check_output_dir(dir_.string(), "--out-dir").find("writable by everyone"), std::string::npos);
  ::chmod(dir_.c_str(), 0775);
  EXPECT_NE(check_output_dir(dir_.string(), "--out-dir").find("writable by its group"), std::string::npos);
  ::chmod(dir_.c_str(), 01777);
  EXPECT_EQ(check_output_dir(dir_.string(), "--out-dir"), "");
  ::chmod(dir_.c_str(), 0755);
  EXPECT_EQ(check_output_dir("/tmp", "--out-dir"), "");
}

// The old writer wrote `path + ".tmp"` with a plain open: a planted link
// there had its target overwritten.
TEST_F(OutputFile, AtomicWritesUseAFreshTemporaryAndKeepTheUmask) {
  std::ofstream(path("target")) << "precious\n";
  fs::create_symlink(path("target"), path("check.json.tmp"));
  ASSERT_EQ(write_file_atomically(path("check.json"), "{}\n"), "");
  EXPECT_EQ(text_of(path("check.json")), "{}\n");
  EXPECT_EQ(text_of(path("target")), "precious\n");
  const mode_t mask = ::umask(022);
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat(path("check.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 3);  // target, the planted link, check.json: no temporary left
  EXPECT_NE(write_file_atomically(path("nope/x"), "x"), "");
  // A device is never renamed over (check.json on /dev/null must not replace it).
  if (fs::exists("/dev/null")) {
    EXPECT_NE(write_file_atomically("/dev/null", "x").find("not a regular file"), std::string::npos);
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
  }
}

// issue 17: a full disk cut a line in half and an exception killed rank 0.
TEST_F(OutputFile, AShortWriteIsCutBackToTheLastWholeLine) {
  LineFile f("results file");
  ASSERT_EQ(f.open(path("r.jsonl"), false), "");
  const std::string line(299, 'x');
  {
    FileSizeLimit limit(1000);
    if (!limit.ok()) GTEST_SKIP() << "setrlimit(RLIMIT_FSIZE) refused here";
    EXPECT_TRUE(f.append(line + "\n"));
    EXPECT_TRUE(f.append(line + "\n"));
    EXPECT_TRUE(f.append(line + "\n"));
    EXPECT_FALSE(f.append(line + "\n"));  // 100 bytes fit, then EFBIG: cut back
    EXPECT_FALSE(f.append("{}\n"));       // nothing more after a failure: no hole in the record
  }
  EXPECT_EQ(fs::file_size(path("r.jsonl")), 900u);
  EXPECT_NE(f.error().find("writing results file '" + path("r.jsonl") + "': File too large (errno 27)"),
            std::string::npos)
      << f.error();
}

TEST_F(OutputFile, RecordWriterNeverThrowsAndSaysWhichFileFailed) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  RecordWriter w;
  ASSERT_EQ(w.open("/dev/full", true), "");
  w.write(Skip{"", "inter", 0, false, "one node"});
  Summary s;
  EXPECT_FALSE(w.seal(s));
  EXPECT_NE(w.error().find("'/dev/full': No space left on device (errno 28)"), std::string::npos) << w.error();
  CsvWriter csv;
  EXPECT_NE(csv.open("/dev/full", true, {"a", "b"}).find("No space left on device"), std::string::npos);
}

TEST_F(OutputFile, RecordEndsOnAWholeLineWhenTheDiskFills) {
  RecordWriter w;
  ASSERT_EQ(w.open(path("r.jsonl"), false), "");
  Measurement m;
  m.op = "all_reduce";
  m.scope = "global";
  {
    FileSizeLimit limit(2000);
    if (!limit.ok()) GTEST_SKIP() << "setrlimit(RLIMIT_FSIZE) refused here";
    RunHeader h;
    h.command = "run";
    w.write(h);
    for (int i = 0; i < 10; ++i) w.write(m);  // ~600 bytes each: the fourth does not fit
    Summary s;
    EXPECT_FALSE(w.seal(s));
  }
  EXPECT_NE(w.error().find("File too large"), std::string::npos) << w.error();
  const Results r = read_results(path("r.jsonl"));
  EXPECT_FALSE(r.truncated);
  EXPECT_FALSE(r.measurements.empty());
  EXPECT_LT(r.measurements.size(), 10u);
  EXPECT_EQ(r.status, "incomplete");  // no summary after a failed row: it would lie
}

TEST(Csv, FieldsAreQuotedAsRfc4180Says) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_row({"op", "P2P/CUMEM,NET/IB", "x\"y"}), "op,\"P2P/CUMEM,NET/IB\",\"x\"\"y\"");
}

}  // namespace
}  // namespace fb
