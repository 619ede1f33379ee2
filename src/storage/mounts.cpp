// /proc/self/mountinfo, one mount per line (proc(5)):
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//   id parent dev root point options [optional fields...] - type source super-options
#include "fabricbench/storage/mounts.hpp"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <array>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <utility>

namespace fb::storage {
namespace {

// The kernel writes space, tab, newline and backslash in paths as \040,
// \011, \012 and \134 (octal).
std::string unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    const auto octal = [](char c) { return c >= '0' && c <= '7'; };
    if (field[i] == '\\' && i + 3 < field.size() && octal(field[i + 1]) && octal(field[i + 2]) &&
        octal(field[i + 3])) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::optional<MountEntry> parse_line(std::string_view line) {
  const auto f = split_spaces(line);
  // id parent dev root point options [optional...] "-" type source [super-options]
  std::size_t dash = 6;
  while (dash < f.size() && f[dash] != "-") ++dash;
  if (dash + 2 >= f.size()) return std::nullopt;
  MountEntry m;
  m.root = unescape(f[3]);
  m.mount_point = unescape(f[4]);
  m.mount_options = std::string(f[5]);
  m.fs_type = unescape(f[dash + 1]);
  m.source = unescape(f[dash + 2]);
  if (dash + 3 < f.size()) m.super_options = std::string(f[dash + 3]);
  if (m.mount_point.empty() || m.mount_point[0] != '/') return std::nullopt;
  return m;
}

// Is `point` the path itself or a folder above it?
bool contains(std::string_view point, std::string_view path) {
  if (point == "/") return !path.empty() && path[0] == '/';
  if (path.substr(0, point.size()) != point) return false;
  return path.size() == point.size() || path[point.size()] == '/';
}

struct KindOf {
  std::string_view type;
  FsKind kind;
};

// By type as the kernel names it. fuse.* are listed where the FUSE program
// is known; others are FsKind::fuse.
constexpr std::array kKinds{
    KindOf{"nfs", FsKind::network},         KindOf{"nfs4", FsKind::network},
    KindOf{"cifs", FsKind::network},        KindOf{"smb3", FsKind::network},
    KindOf{"fuse.sshfs", FsKind::network},  KindOf{"9p", FsKind::network},
    KindOf{"virtiofs", FsKind::network},    KindOf{"lustre", FsKind::parallel},
    KindOf{"beegfs", FsKind::parallel},     KindOf{"gpfs", FsKind::parallel},
    KindOf{"ceph", FsKind::parallel},       KindOf{"fuse.ceph-fuse", FsKind::parallel},
    KindOf{"fuse.glusterfs", FsKind::parallel}, KindOf{"glusterfs", FsKind::parallel},
    KindOf{"wekafs", FsKind::parallel},     KindOf{"fuse.juicefs", FsKind::parallel},
    KindOf{"ext4", FsKind::local},          KindOf{"ext3", FsKind::local},
    KindOf{"ext2", FsKind::local},          KindOf{"xfs", FsKind::local},
    KindOf{"btrfs", FsKind::local},         KindOf{"zfs", FsKind::local},
    KindOf{"f2fs", FsKind::local},          KindOf{"vfat", FsKind::local},
    KindOf{"tmpfs", FsKind::memory},        KindOf{"ramfs", FsKind::memory},
    KindOf{"devtmpfs", FsKind::memory},
};

}  // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (auto m = parse_line(line)) out.push_back(std::move(*m));
  }
  return out;
}

std::optional<MountEntry> mount_for(const std::vector<MountEntry>& mounts, std::string_view path) {
  const MountEntry* best = nullptr;
  for (const auto& m : mounts)
    if (contains(m.mount_point, path) && (!best || m.mount_point.size() >= best->mount_point.size())) best = &m;
  if (!best) return std::nullopt;
  return *best;
}

FsKind fs_kind(std::string_view type) {
  for (const auto& k : kKinds)
    if (k.type == type) return k.kind;
  if (type.substr(0, 5) == "fuse." || type == "fuse" || type == "fuseblk") return FsKind::fuse;
  return FsKind::other;
}

std::string_view name(FsKind kind) {
  switch (kind) {
    case FsKind::network:
      return "network";
    case FsKind::parallel:
      return "parallel";
    case FsKind::local:
      return "local";
    case FsKind::memory:
      return "memory";
    case FsKind::fuse:
      return "fuse";
    case FsKind::other:
      return "other";
  }
  return "other";
}

std::optional<MountEntry> mount_of_path(const std::string& path, std::string& error, const std::string& mountinfo) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) {
    error = fmt::format("'{}': {}", path, std::strerror(errno));
    return std::nullopt;
  }
  std::ifstream in(mountinfo);
  if (!in) {
    error = fmt::format("cannot read {}", mountinfo);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto m = mount_for(parse_mountinfo(text.str()), resolved);
  if (!m) error = fmt::format("'{}' is on no mount listed in {}", resolved, mountinfo);
  return m;
}

std::string describe(const MountEntry& m) {
  return fmt::format("{} ({}) {}, {}", m.fs_type, name(fs_kind(m.fs_type)), m.source, m.mount_options);
}

}  // namespace fb::storage
