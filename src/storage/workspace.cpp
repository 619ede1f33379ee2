#include "fabricbench/storage/workspace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "errno_text.hpp"

namespace fb::storage {
namespace {

// Every Workspace of the process, for clean_all_workspaces().
std::mutex g_all_mutex;
std::vector<Workspace*>& all_workspaces() {
  static std::vector<Workspace*> all;
  return all;
}


constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

}  // namespace

std::string run_folder_name(const std::string& run_id) { return "fabricbench-storage-" + run_id; }

std::string check_folder(const std::string& path, const std::string& flag) {
  if (path.empty()) return fmt::format("{} is empty: give the folder to measure in", flag);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? fmt::format("{} '{}' does not exist: give an existing folder on the filesystem to "
                                         "measure (its files go into a subfolder that is removed afterwards)",
                                         flag, path)
                           : fmt::format("{} '{}': {}", flag, path, errno_text(errno));
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} '{}' is not a folder: give the folder to measure in", flag, path);
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
    return fmt::format("{} '{}' is on a read-only mount: measuring writes files there; give a writable folder "
                       "(or remount it read-write)",
                       flag, path);
  if (::access(path.c_str(), W_OK | X_OK) != 0)
    return fmt::format("{} '{}' is not writable by this user ({}): give a folder you may create files in", flag, path,
                       errno_text(errno));
  return {};
}

Workspace::Workspace() {
  std::lock_guard lock(g_all_mutex);
  all_workspaces().push_back(this);
}

Workspace::~Workspace() {
  {
    std::lock_guard lock(g_all_mutex);
    auto& all = all_workspaces();
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
  }
  clean();
  for (int fd : {rank_fd_, run_fd_, base_fd_})
    if (fd >= 0) ::close(fd);
}

std::string Workspace::open_base(const std::string& path, const std::string& flag) {
  std::lock_guard lock(mutex_);
  // The folder the user named may itself be reached through a link
  // (/shared -> /mnt/lustre): followed here, once. Nothing below it is.
  base_fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base_fd_ < 0) return fmt::format("{} '{}': {}", flag, path, errno_text(errno));
  base_path_ = path;
  return {};
}

std::string Workspace::make_run_folder(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (::mkdirat(base_fd_, name.c_str(), 0700) != 0) {
    const int e = errno;
    if (e == EROFS) return fmt::format("'{}' is on a read-only filesystem: give a writable folder", base_path_);
    if (e == EACCES || e == EPERM)
      return fmt::format("cannot create a folder in '{}' ({}): give a folder you may create files in", base_path_,
                         errno_text(e));
    return fmt::format("cannot create '{}/{}': {}", base_path_, name, errno_text(e));
  }
  run_name_ = name;
  made_run_folder_ = true;
  run_fd_ = ::openat(base_fd_, name.c_str(), kDirFlags);
  if (run_fd_ < 0) return fmt::format("cannot open '{}/{}': {}", base_path_, name, errno_text(errno));
  return {};
}

bool Workspace::find_run_folder(const std::string& name, std::string& error) {
  std::lock_guard lock(mutex_);
  const int fd = ::openat(base_fd_, name.c_str(), kDirFlags);
  if (fd < 0) {
    if (errno != ENOENT) error = fmt::format("'{}/{}': {}", base_path_, name, errno_text(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    error = fmt::format("'{}/{}' exists but is not this user's: another program made it", base_path_, name);
    return false;
  }
  run_name_ = name;
  run_fd_ = fd;
  return true;
}

std::string Workspace::make_rank_folder(int rank) {
  std::lock_guard lock(mutex_);
  const std::string name = fmt::format("rank{}", rank);
  if (::mkdirat(run_fd_, name.c_str(), 0700) != 0)
    return fmt::format("cannot create '{}/{}/{}': {}", base_path_, run_name_, name, errno_text(errno));
  rank_name_ = name;
  rank_fd_ = ::openat(run_fd_, name.c_str(), kDirFlags);
  if (rank_fd_ < 0) return fmt::format("cannot open '{}': {}", rank_path(), errno_text(errno));
  reaper_ = start_reaper(base_fd_, run_fd_, rank_fd_, run_name_, rank_name_);
  return {};
}

int Workspace::create(const std::string& name, int flags, bool keep_name) {
  // Under the lock from the name's creation to its listing (or unlinking),
  // so clean() never runs between them and misses a file.
  std::lock_guard lock(mutex_);
  if (cleaned_ || rank_fd_ < 0) {
    errno = ECANCELED;
    return -1;
  }
  const int fd = ::openat(rank_fd_, name.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    // An open that fails after making the file (O_DIRECT on a filesystem
    // that refuses it only once the file exists) must not leave it; a name
    // that was there before (EEXIST) is not ours to remove.
    const int e = errno;
    if (e != EEXIST) ::unlinkat(rank_fd_, name.c_str(), 0);
    errno = e;
    return -1;
  }
  if (keep_name) {
    names_.insert(name);
  } else {
    ::unlinkat(rank_fd_, name.c_str(), 0);
  }
  return fd;
}

int Workspace::open_file(const std::string& name, int flags) {
  std::lock_guard lock(mutex_);
  if (cleaned_ || rank_fd_ < 0) {
    errno = ECANCELED;
    return -1;
  }
  return ::openat(rank_fd_, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
}

std::string Workspace::remove(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (names_.count(name) == 0 || rank_fd_ < 0) return {};
  // A file that cannot be unlinked now stays listed: clean() tries again.
  if (::unlinkat(rank_fd_, name.c_str(), 0) != 0 && errno != ENOENT)
    return fmt::format("cannot remove '{}/{}': {}", rank_path(), name, errno_text(errno));
  names_.erase(name);
  return {};
}

void Workspace::clean() noexcept {
  std::lock_guard lock(mutex_);
  if (cleaned_) return;
  cleaned_ = true;
  if (rank_fd_ >= 0) {
    for (const auto& n : names_) ::unlinkat(rank_fd_, n.c_str(), 0);
    names_.clear();
  }
  if (run_fd_ >= 0 && !rank_name_.empty()) ::unlinkat(run_fd_, rank_name_.c_str(), AT_REMOVEDIR);
  // Fails with ENOTEMPTY while another rank's folder is in it: the last rank
  // to remove its own removes this one.
  if (base_fd_ >= 0 && !run_name_.empty()) ::unlinkat(base_fd_, run_name_.c_str(), AT_REMOVEDIR);
  release_reaper(reaper_);
}

std::size_t Workspace::listed() const {
  std::lock_guard lock(mutex_);
  return names_.size();
}

bool Workspace::free_bytes(std::uint64_t& bytes, std::string& error) const {
  std::lock_guard lock(mutex_);
  struct statvfs vfs {};
  if (base_fd_ < 0 || ::fstatvfs(base_fd_, &vfs) != 0) {
    error = fmt::format("cannot read the free space of '{}': {}", base_path_, errno_text(errno));
    return false;
  }
  bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  return true;
}

std::string Workspace::rank_path() const { return base_path_ + "/" + run_name_ + "/" + rank_name_; }

void clean_all_workspaces() noexcept {
  std::lock_guard lock(g_all_mutex);
  for (Workspace* w : all_workspaces()) w->clean();
}

}  // namespace fb::storage
