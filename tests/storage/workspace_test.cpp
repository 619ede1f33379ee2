// The folders a rank measures in: made exclusively, nothing followed through
// a link, everything removed by clean() (also after a failed open), and bad
// folders named with what to do.
#include "fabricbench/storage/workspace.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "process.hpp"

namespace fb::storage {
namespace {

namespace fs = std::filesystem;

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_ws_"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::recursive_directory_iterator(dir_), {})); }
  // A workspace with its run and rank folders made.
  void make(Workspace& ws, int rank = 0) {
    ASSERT_EQ(ws.open_base(dir_, "--path"), "");
    if (rank == 0) {
      ASSERT_EQ(ws.make_run_folder(run_folder_name("id")), "");
    } else {
      std::string error;
      ASSERT_TRUE(ws.find_run_folder(run_folder_name("id"), error)) << error;
    }
    ASSERT_EQ(ws.make_rank_folder(rank), "");
  }
  std::string dir_;
};

TEST_F(WorkspaceTest, MakesItsFoldersAndRemovesThemWithTheFiles) {
  {
    Workspace ws;
    make(ws);
    EXPECT_TRUE(fs::is_directory(dir_ + "/fabricbench-storage-id/rank0"));
    const int kept = ws.create("kept", O_WRONLY, true);
    ASSERT_GE(kept, 0);
    ::close(kept);
    const int gone = ws.create("unlinked", O_RDWR, false);
    ASSERT_GE(gone, 0);
    EXPECT_EQ(::write(gone, "x", 1), 1);  // the descriptor holds the file
    ::close(gone);
    EXPECT_TRUE(fs::exists(ws.rank_path() + "/kept"));
    EXPECT_FALSE(fs::exists(ws.rank_path() + "/unlinked"));
    EXPECT_EQ(ws.listed(), 1u);
    ws.clean();
    EXPECT_EQ(entries(), 0u);
    // Nothing is made once cleaned: a pattern still running cannot leave a file.
    EXPECT_EQ(ws.create("late", O_WRONLY, true), -1);
    EXPECT_EQ(errno, ECANCELED);
  }
  EXPECT_EQ(entries(), 0u);
}

// A file that cannot be unlinked (here a folder took its name) stays listed
// for clean() to try again: remove() once took the name off the list first,
// and the caller dropped the error (found by making remove() [[nodiscard]]).
TEST_F(WorkspaceTest, AFileThatCannotBeRemovedStaysListed) {
  Workspace ws;
  make(ws);
  const int fd = ws.create("shard", O_WRONLY, true);
  ASSERT_GE(fd, 0);
  ::close(fd);
  fs::remove(ws.rank_path() + "/shard");
  fs::create_directory(ws.rank_path() + "/shard");
  const std::string error = ws.remove("shard");
  EXPECT_NE(error.find("cannot remove '" + ws.rank_path() + "/shard'"), std::string::npos) << error;
  EXPECT_EQ(ws.listed(), 1u);
  fs::remove(ws.rank_path() + "/shard");
  EXPECT_EQ(ws.remove("shard"), "");
  EXPECT_EQ(ws.listed(), 0u);
}

TEST_F(WorkspaceTest, TheDestructorCleansUp) {
  {
    Workspace ws;
    make(ws);
    const int fd = ws.create("left", O_WRONLY, true);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(WorkspaceTest, TheRunFolderGoesWithTheLastRankFolder) {
  Workspace a;
  Workspace b;
  make(a, 0);
  make(b, 1);
  a.clean();
  EXPECT_TRUE(fs::exists(dir_ + "/fabricbench-storage-id/rank1"));  // b's is still there
  b.clean();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(WorkspaceTest, CleanAllReachesEveryWorkspace) {
  Workspace a;
  make(a, 0);
  const int fd = a.create("f", O_WRONLY, true);
  ASSERT_GE(fd, 0);
  ::close(fd);
  clean_all_workspaces();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(WorkspaceTest, NothingIsWrittenThroughALinkOrOverAFile) {
  Workspace ws;
  make(ws);
  const std::string outside = dir_ + "/../fb_ws_outside_target";
  fs::create_symlink(outside, ws.rank_path() + "/planted");
  EXPECT_EQ(ws.create("planted", O_WRONLY, true), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_FALSE(fs::exists(outside));
  std::ofstream(ws.rank_path() + "/there") << "keep me";
  EXPECT_EQ(ws.create("there", O_WRONLY, true), -1);
  EXPECT_TRUE(fs::exists(ws.rank_path() + "/there"));  // EEXIST: not ours, not removed
  EXPECT_EQ(ws.open_file("planted", O_RDONLY), -1);     // O_NOFOLLOW
  fs::remove(ws.rank_path() + "/planted");
  fs::remove(ws.rank_path() + "/there");
}

TEST_F(WorkspaceTest, ARunFolderThatExistsIsRefused) {
  fs::create_directory(dir_ + "/fabricbench-storage-id");
  Workspace ws;
  ASSERT_EQ(ws.open_base(dir_, "--path"), "");
  EXPECT_NE(ws.make_run_folder(run_folder_name("id")).find("File exists"), std::string::npos);
  fs::remove(dir_ + "/fabricbench-storage-id");
  // A link where the run folder would be is not followed either.
  fs::create_directory_symlink("/", dir_ + "/fabricbench-storage-id");
  std::string error;
  EXPECT_FALSE(ws.find_run_folder(run_folder_name("id"), error));
  EXPECT_FALSE(error.empty());
  fs::remove(dir_ + "/fabricbench-storage-id");
}

TEST_F(WorkspaceTest, FindingNoRunFolderIsNoError) {
  Workspace ws;
  ASSERT_EQ(ws.open_base(dir_, "--path"), "");
  std::string error;
  EXPECT_FALSE(ws.find_run_folder(run_folder_name("other"), error));
  EXPECT_EQ(error, "");
}

TEST_F(WorkspaceTest, FreeSpaceIsRead) {
  Workspace ws;
  ASSERT_EQ(ws.open_base(dir_, "--path"), "");
  std::uint64_t free = 0;
  std::string error;
  ASSERT_TRUE(ws.free_bytes(free, error)) << error;
  EXPECT_GT(free, 0u);
}

TEST_F(WorkspaceTest, BadFoldersAreNamedWithWhatToDo) {
  EXPECT_NE(check_folder(dir_ + "/missing", "--path").find("does not exist"), std::string::npos);
  EXPECT_NE(check_folder(dir_ + "/missing", "--path").find(dir_ + "/missing"), std::string::npos);
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_NE(check_folder(dir_ + "/file", "--local").find("--local '" + dir_ + "/file' is not a folder"),
            std::string::npos);
  EXPECT_NE(check_folder("", "--path").find("empty"), std::string::npos);
  EXPECT_EQ(check_folder(dir_, "--path"), "");
  // /proc is mounted read-only in no sense a user can write to; a file there is refused either way.
  if (::geteuid() != 0) {
    EXPECT_NE(check_folder("/", "--path").find("not writable"), std::string::npos);
  }
}

}  // namespace
}  // namespace fb::storage
