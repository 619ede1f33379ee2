// The patterns on this machine's own filesystems: the figures count what was
// moved, and whether the page cache was bypassed, dropped or kept is read
// from the page cache itself (mincore), checked here against what the mount
// table says the filesystem is.
#include "fabricbench/storage/patterns.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fabricbench/storage/mounts.hpp"
#include "process.hpp"

namespace fb::storage {
namespace {

namespace fs = std::filesystem;

class Patterns : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!fs::is_directory(GetParam())) GTEST_SKIP() << GetParam() << " is not here";
    dir_ = GetParam() + "/fb_patterns_" + std::to_string(::getpid());
    fs::create_directory(dir_);
    ASSERT_EQ(ws_.open_base(dir_, "--path"), "");
    ASSERT_EQ(ws_.make_run_folder(run_folder_name("t")), "");
    ASSERT_EQ(ws_.make_rank_folder(0), "");
    std::string error;
    const auto m = mount_of_path(dir_, error);
    ASSERT_TRUE(m) << error;
    memory_ = fs_kind(m->fs_type) == FsKind::memory;
    fs_type_ = m->fs_type;
  }
  void TearDown() override {
    ws_.clean();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::size_t left() const { return static_cast<std::size_t>(std::distance(fs::recursive_directory_iterator(dir_), {})); }
  Workspace ws_;
  std::string dir_;
  std::string fs_type_;
  bool memory_ = false;
};

TEST_P(Patterns, SequentialMovesWholeBlocksAndSaysWhatItMeasured) {
  for (const Mode mode : {Mode::buffered, Mode::direct}) {
    SequentialFile file(ws_, 8 << 20, 1 << 20, mode, nullptr);
    const RankFigures w = file.write();
    EXPECT_EQ(w.bytes, 8u << 20);
    EXPECT_EQ(w.ops, 8u);
    ASSERT_EQ(w.op_us.size(), 8u);
    EXPECT_GT(w.elapsed_us, 0);
    const RankFigures r = file.read();
    EXPECT_EQ(r.bytes, 8u << 20);
    EXPECT_EQ(r.ops, 8u);
    for (double t : r.op_us) EXPECT_GT(t, 0);
    // The unlinked file leaves no name while it is used.
    EXPECT_EQ(left(), 2u) << "only the run and rank folders";
    if (memory_) {
      // tmpfs keeps the file in RAM whatever is asked: said, not hidden.
      EXPECT_EQ(w.cache, Cache::cached) << fs_type_;
      EXPECT_EQ(r.cache, Cache::cached) << fs_type_;
      EXPECT_NE(r.note.find("in memory"), std::string::npos) << r.note;
    } else if (mode == Mode::buffered) {
      EXPECT_EQ(w.cache, Cache::synced) << fs_type_;
      EXPECT_EQ(r.cache, Cache::dropped) << fs_type_ << ": " << r.note;
      EXPECT_FALSE(r.o_direct);
    } else if (r.o_direct) {
      EXPECT_EQ(r.cache, Cache::bypassed) << fs_type_;
    } else {
      EXPECT_NE(r.note.find("O_DIRECT refused"), std::string::npos) << r.note;  // and buffered instead
      EXPECT_EQ(r.cache, Cache::dropped);
    }
  }
}

TEST_P(Patterns, SmallFilesAreEachOpenedAndClosedAndRemovedAfter) {
  {
    SmallFiles files(ws_, 20, 64 << 10, 64 << 10, Mode::buffered, nullptr);
    const RankFigures w = files.write();
    EXPECT_EQ(w.ops, 20u);
    EXPECT_EQ(w.bytes, 20u * (64 << 10));
    EXPECT_EQ(ws_.listed(), 20u);
    EXPECT_EQ(left(), 22u);
    const RankFigures r = files.read();
    EXPECT_EQ(r.ops, 20u);
    EXPECT_EQ(r.op_us.size(), 20u);
    EXPECT_EQ(r.cache, memory_ ? Cache::cached : Cache::dropped) << fs_type_ << ": " << r.note;
  }
  EXPECT_EQ(ws_.listed(), 0u);
  EXPECT_EQ(left(), 2u);
}

TEST_P(Patterns, DirectSmallFilesNeedWholeBlocks) {
  SmallFiles files(ws_, 3, 10000, 10000, Mode::direct, nullptr);
  const RankFigures w = files.write();
  EXPECT_FALSE(w.o_direct);
  EXPECT_NE(w.note.find("O_DIRECT needs whole"), std::string::npos) << w.note;
  const RankFigures r = files.read();
  EXPECT_EQ(r.bytes, 30000u);
}

TEST_P(Patterns, TheResidencyProbeSeesAFreshlyWrittenFile) {
  const int fd = ws_.create("probe", O_RDWR, false);
  ASSERT_GE(fd, 0);
  IoBuffer b(1 << 20);
  ASSERT_EQ(::write(fd, b.data(), 1 << 20), 1 << 20);
  EXPECT_GT(resident_fraction(fd, 1 << 20), 0.9);  // just written: in the page cache on every filesystem
  if (!memory_) {
    ASSERT_EQ(::fsync(fd), 0);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    EXPECT_EQ(resident_fraction(fd, 1 << 20), 0.0) << fs_type_;
  }
  ::close(fd);
}

// The 4 KiB pages of `fd`'s first `bytes`, each as a string, as many as it has.
std::vector<std::string> pages_of(int fd, std::uint64_t bytes) {
  std::vector<std::string> pages;
  std::string page(kDirectAlign, '\0');
  for (std::uint64_t off = 0; off < bytes; off += kDirectAlign) {
    if (::pread(fd, page.data(), page.size(), static_cast<off_t>(off)) != static_cast<ssize_t>(page.size())) break;
    pages.push_back(page);
  }
  return pages;
}

// The descriptor this process holds on the unlinked file `path` (its /proc
// link reads "PATH (deleted)"), reopened for reading; -1 when none.
int reopen_unlinked(const std::string& path) {
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(e.path(), ec).string() == path + " (deleted)") return ::open(e.path().c_str(), O_RDONLY);
  }
  return -1;
}

std::size_t distinct(const std::vector<std::string>& pages) {
  return std::set<std::string>(pages.begin(), pages.end()).size();
}

// Every block written used to be the same buffer, on every rank: a
// deduplicating filesystem or array keeps one copy and the write figure is
// whatever it likes. Now no two pages of what a run writes are alike.
TEST_P(Patterns, NoTwoPagesWrittenAreAlikeSoDeduplicationCannotFlatterTheWrite) {
  {
    SequentialFile file(ws_, 1 << 20, 256 << 10, Mode::buffered, nullptr);
    file.write();
    const int fd = reopen_unlinked(ws_.rank_path() + "/seq");
    ASSERT_GE(fd, 0) << "no descriptor on " << ws_.rank_path() << "/seq";
    const auto pages = pages_of(fd, 1 << 20);
    ::close(fd);
    ASSERT_EQ(pages.size(), 256u);
    EXPECT_EQ(distinct(pages), pages.size()) << "the sequential file repeats pages";
  }
  SmallFiles files(ws_, 4, 64 << 10, 16 << 10, Mode::buffered, nullptr);
  files.write();
  std::vector<std::string> pages;
  for (int i = 0; i < 4; ++i) {
    const int fd = ::open(fmt::format("{}/shard{:07}", ws_.rank_path(), i).c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << "shard " << i;
    const auto mine = pages_of(fd, 64 << 10);
    ::close(fd);
    EXPECT_EQ(mine.size(), 16u);
    pages.insert(pages.end(), mine.begin(), mine.end());
  }
  ASSERT_EQ(pages.size(), 64u);
  EXPECT_EQ(distinct(pages), pages.size()) << "the small files repeat pages";
}

// Two ranks' buffers of one size, stamped for the same block, still differ.
TEST(IoBuffer, TwoBuffersStampedForTheSameBlockDiffer) {
  IoBuffer a(8192), b(8192);
  a.stamp(0);
  b.stamp(0);
  EXPECT_NE(std::memcmp(a.data(), b.data(), 8192), 0);
  EXPECT_NE(std::memcmp(a.data() + 4096, b.data() + 4096, 4096), 0) << "the second page too";
}

// The build folder (a disk) and /dev/shm (tmpfs, where there is one).
INSTANTIATE_TEST_SUITE_P(Here, Patterns, ::testing::Values(std::string(FB_BUILD_DIR), std::string("/dev/shm")),
                         [](const auto& info) { return info.index == 0 ? std::string("build_folder") : std::string("dev_shm"); });

}  // namespace
}  // namespace fb::storage
