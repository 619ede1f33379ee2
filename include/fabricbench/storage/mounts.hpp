// Which filesystem a path lives on, from /proc/self/mountinfo (proc(5)): its
// type (nfs4, lustre, beegfs, fuse.sshfs, ext4, xfs, tmpfs ...), where it
// comes from (server:/export, /dev/nvme0n1p1) and its mount options. The
// parsing is a pure function of the text, tested on fixtures; only
// mount_of_path() reads the running system.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb::storage {

struct MountEntry {
  std::string mount_point;    // as the kernel prints it, escapes (\040 ...) undone
  std::string root;           // the folder of the filesystem mounted there (bind mounts)
  std::string fs_type;        // "nfs4", "fuse.sshfs", "ext4" ...
  std::string source;         // "server:/export", "/dev/vda", "tmpfs"
  std::string mount_options;  // per-mount: "rw,relatime"
  std::string super_options;  // per-filesystem: "rw,vers=4.2,rsize=1048576,..."
};

// Every well-formed line; a line that is not (too few fields, no " - "
// separator) is skipped, so a kernel that adds fields does not stop us.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// The mount `path` (absolute, symbolic links already resolved) lives on: the
// longest mount point that is `path` or a folder above it; of several at one
// point, the last listed (mounted over the others). nullopt when none is
// (mountinfo of another mount namespace).
std::optional<MountEntry> mount_for(const std::vector<MountEntry>& mounts, std::string_view path);

// What kind of filesystem a type is, in words a reader of the table knows.
enum class FsKind {
  network,   // nfs, cifs/smb, sshfs ...: one server behind a network link
  parallel,  // lustre, beegfs, gpfs, cephfs ...: striped over many servers
  local,     // ext4, xfs, btrfs ... on a disk of this node
  memory,    // tmpfs, ramfs: RAM, not storage
  fuse,      // another FUSE filesystem: could be either
  other,     // overlay, proc, unknown
};
FsKind fs_kind(std::string_view fs_type);
std::string_view name(FsKind kind);

// The mount of a path on this node: resolves the path (realpath) and reads
// /proc/self/mountinfo. nullopt, with `error` set, when either fails.
// `mountinfo` is the table to read: this process's, or a copied one
// (`fabricbench topo --mountinfo`, fixtures).
std::optional<MountEntry> mount_of_path(const std::string& path, std::string& error,
                                        const std::string& mountinfo = "/proc/self/mountinfo");

// "fuse.sshfs (network) root@10.0.0.1:/export, rw,nosuid,nodev,relatime"
std::string describe(const MountEntry& mount);

}  // namespace fb::storage
