// Which filesystem a path is on, from mountinfo text (fixtures of a GPU node
// with NFS, Lustre, BeeGFS, sshfs, local NVMe, tmpfs, a bind mount, a mount
// point with a space and one mounted over another).
#include "fabricbench/storage/mounts.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fb::storage {
namespace {

std::vector<MountEntry> fixture() {
  std::ifstream in(std::string(FB_SOURCE_DIR) + "/tests/storage/fixtures/gpu-node.mountinfo");
  std::ostringstream s;
  s << in.rdbuf();
  return parse_mountinfo(s.str());
}

MountEntry at(const std::string& path) {
  const auto m = mount_for(fixture(), path);
  if (!m) throw std::runtime_error("no mount for " + path);
  return *m;
}

TEST(Mounts, EveryWellFormedLineIsRead) {
  // 15 lines, one of them not a mount.
  EXPECT_EQ(fixture().size(), 14u);
}

TEST(Mounts, NamesTheNetworkAndParallelFilesystems) {
  const MountEntry nfs = at("/shared/imagenet/train");
  EXPECT_EQ(nfs.fs_type, "nfs4");
  EXPECT_EQ(nfs.source, "10.0.0.5:/export/datasets");
  EXPECT_EQ(nfs.mount_point, "/shared");
  EXPECT_EQ(nfs.mount_options, "rw,relatime");
  EXPECT_NE(nfs.super_options.find("nconnect=8"), std::string::npos);
  EXPECT_EQ(fs_kind(nfs.fs_type), FsKind::network);
  EXPECT_EQ(at("/lustre/project").fs_type, "lustre");
  EXPECT_EQ(fs_kind("lustre"), FsKind::parallel);
  const MountEntry beegfs = at("/mnt/beegfs");
  EXPECT_EQ(beegfs.fs_type, "beegfs");  // optional fields (shared:, master:) before the separator
  EXPECT_EQ(beegfs.super_options, "rw,cfgFile=/etc/beegfs/beegfs-client.conf");
  EXPECT_EQ(fs_kind("beegfs"), FsKind::parallel);
  const MountEntry sshfs = at("/mnt/sshfs/x");
  EXPECT_EQ(sshfs.fs_type, "fuse.sshfs");
  EXPECT_EQ(sshfs.source, "root@10.176.142.11:/srv/export");
  EXPECT_EQ(fs_kind("fuse.sshfs"), FsKind::network);
  EXPECT_EQ(fs_kind(at("/mnt/fuse-other").fs_type), FsKind::fuse);  // a FUSE program not known
}

TEST(Mounts, NamesLocalDisksAndMemory) {
  EXPECT_EQ(at("/local_nvme/tmp").fs_type, "xfs");
  EXPECT_EQ(fs_kind("xfs"), FsKind::local);
  EXPECT_EQ(at("/dev/shm").fs_type, "tmpfs");
  EXPECT_EQ(fs_kind("tmpfs"), FsKind::memory);
  EXPECT_EQ(at("/home/me").fs_type, "ext4");  // only / above it
  EXPECT_EQ(at("/home/me").mount_point, "/");
  EXPECT_EQ(fs_kind("proc"), FsKind::other);
}

TEST(Mounts, APrefixMustEndAtAFolderBoundary) {
  // /sharedx is not below /shared, nor /lustre2 below /lustre.
  EXPECT_EQ(at("/sharedx/data").mount_point, "/");
  EXPECT_EQ(at("/lustre2").mount_point, "/");
  EXPECT_EQ(at("/shared").mount_point, "/shared");
}

TEST(Mounts, TheLastMountAtAPointIsTheOneSeen) {
  // tmpfs then ext4 on /shared/scratch: ext4 was mounted over the tmpfs.
  const MountEntry m = at("/shared/scratch/run1");
  EXPECT_EQ(m.fs_type, "ext4");
  EXPECT_EQ(m.source, "/dev/sdc1");
}

TEST(Mounts, EscapesAndBindMountsAreUndone) {
  const MountEntry spaced = at("/mnt/my data/x");
  EXPECT_EQ(spaced.mount_point, "/mnt/my data");
  EXPECT_EQ(spaced.source, "/dev/sdb1");
  const MountEntry bind = at("/data/imagenet/val");
  EXPECT_EQ(bind.root, "/datasets/imagenet");
  EXPECT_EQ(bind.mount_options, "ro,relatime");
}

TEST(Mounts, NothingMatchesARelativePathOrAnEmptyTable) {
  EXPECT_FALSE(mount_for(fixture(), "relative/path"));
  EXPECT_FALSE(mount_for({}, "/shared"));
  EXPECT_TRUE(parse_mountinfo("").empty());
  EXPECT_TRUE(parse_mountinfo("1 2 3:4 / /x rw\n").empty());  // no " - type source"
}

TEST(Mounts, ThisMachinesRootIsFound) {
  std::string error;
  const auto m = mount_of_path("/", error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->mount_point, "/");
  EXPECT_FALSE(m->fs_type.empty());
  EXPECT_FALSE(mount_of_path("/no/such/folder/anywhere", error));
  EXPECT_NE(error.find("/no/such/folder/anywhere"), std::string::npos);
}

TEST(Mounts, DescribeSaysTypeKindSourceAndOptions) {
  EXPECT_EQ(describe(at("/shared")), "nfs4 (network) 10.0.0.5:/export/datasets, rw,relatime");
}

}  // namespace
}  // namespace fb::storage
