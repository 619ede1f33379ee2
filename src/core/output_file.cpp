#include "fabricbench/core/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

namespace fb {

namespace fs = std::filesystem;

namespace {

// The process's umask, read once before main() while only one thread exists
// (umask() can only be read by setting it): mkstemp makes 0600 files, which
// then get the mode an ordinary open() would have given.
const mode_t kUmask = [] {
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}();

fs::path folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// Writes all of `text`; false with errno set on failure.
bool write_all(int fd, std::string_view text, std::size_t& done) {
  done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {  // not expected of a regular file; treat as full
      errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string written_now(const std::string& path) {
  return fmt::format("'{}' is being written by another fabricbench right now (it holds the file's lock): wait for "
                     "that run to end, or give another path",
                     path);
}

// Whether another process holds the lock open_output takes (checked before
// anything runs, so every command refuses with exit 2; open_output still
// finds a run that started in between).
bool being_written(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if this took it
  return locked;
}

}  // namespace

std::string io_error(std::string_view what, const std::string& path, int error_number) {
  return fmt::format("{} '{}': {} (errno {})", what, path, std::strerror(error_number), error_number);
}

std::string check_not_an_input(const std::string& output, const std::string& flag,
                               const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) return {};  // not there yet: it is none of the inputs
  for (const auto& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      return fmt::format("{} '{}' is the input '{}': writing it would destroy what it is made from; give another "
                         "path",
                         flag, output, input);
  }
  return {};
}

std::string check_output(const std::string& path, const std::string& flag, bool overwrite) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return fmt::format("{} '{}' is a symbolic link: fabricbench does not write through links; remove it or give "
                         "another path",
                         flag, path);
    if (S_ISDIR(st.st_mode)) return fmt::format("{} '{}' is a folder; give a file name inside it", flag, path);
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
      return fmt::format("{} '{}' is not a regular file (a FIFO or socket would block the job); give a file path",
                         flag, path);
    if (!overwrite)
      return fmt::format("{} '{}' exists: give --overwrite to replace it, or another path", flag, path);
    if (::access(path.c_str(), W_OK) != 0)
      return fmt::format("{} '{}' is not writable: {}", flag, path, std::strerror(errno));
    if (S_ISREG(st.st_mode) && being_written(path)) return fmt::format("{} {}", flag, written_now(path));
    return {};
  }
  const fs::path folder = folder_of(path);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return fmt::format("{} '{}': the folder '{}' does not exist; create it or choose another path", flag, path,
                       folder.string());
  if (::access(folder.c_str(), W_OK) != 0)
    return fmt::format("{} '{}': cannot create files in '{}': {}", flag, path, folder.string(), std::strerror(errno));
  return {};
}

std::string check_outputs(const std::vector<OutputPath>& outputs, bool overwrite) {
  std::vector<std::pair<fs::path, const OutputPath*>> seen;
  for (const auto& out : outputs) {
    if (out.path.empty()) continue;
    if (auto err = check_output(out.path, out.flag, overwrite); !err.empty()) return err;
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(fs::absolute(out.path, ec), ec);
    if (ec) canonical = out.path;
    for (const auto& [other, which] : seen) {
      std::error_code same_ec;
      if (other == canonical || fs::equivalent(other, canonical, same_ec))
        return fmt::format("{} and {} both name '{}': give each output its own file", which->flag, out.flag,
                           out.path);
    }
    seen.emplace_back(std::move(canonical), &out);
  }
  return {};
}

std::string check_output_dir(const std::string& dir, const std::string& flag) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return fmt::format("{} '{}': {}", flag, dir, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} '{}' is not a folder", flag, dir);
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return fmt::format("{} '{}' belongs to another user (uid {}): another user's folder can hold links where "
                       "fabricbench writes; use a folder of your own",
                       flag, dir, st.st_uid);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    return fmt::format("{} '{}' is writable by {} and not sticky: others could plant files or links in it; use a "
                       "folder only you can write (chmod go-w), or a sticky one like /tmp",
                       flag, dir, (st.st_mode & S_IWOTH) != 0 ? "everyone" : "its group");
  return {};
}

namespace {

// Two runs given the same --out and --overwrite once interleaved their lines
// into one corrupt record. A regular file is locked (flock, held until the
// descriptor closes) before it is cut to nothing: the second run finds the
// lock and refuses, and the first run's file is left whole. A filesystem
// without locks (ENOLCK, EOPNOTSUPP) writes unlocked, as before; a device
// (/dev/null) is never locked, so any number of runs may write to it.
bool lock_and_cut(int fd, const std::string& path, bool overwrite, std::string& error) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return true;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    error = written_now(path);
    return false;
  }
  if (overwrite && ::ftruncate(fd, 0) != 0) {
    error = io_error("cannot empty", path, errno);
    return false;
  }
  return true;
}

}  // namespace

int open_output(const std::string& path, bool overwrite, std::string& error) {
  // No O_TRUNC: the file is cut only once this process holds its lock.
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (overwrite ? 0 : O_EXCL);
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) {
    const int e = errno;
    error = e == EEXIST  ? fmt::format("'{}' exists: give --overwrite to replace it, or another path", path)
            : e == ELOOP ? fmt::format("'{}' is a symbolic link: fabricbench does not write through links", path)
                         : io_error("cannot open", path, e);
    return fd;
  }
  if (!lock_and_cut(fd, path, overwrite, error)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string write_file_atomically(const std::string& path, std::string_view text) {
  // The rename replaces whatever has the name: only ever a regular file (a
  // device such as /dev/null must not become one).
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fmt::format("cannot write '{}': it exists and is not a regular file", path);
  const fs::path target(path);
  std::string tmp = (folder_of(path) / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return io_error("cannot create a temporary file beside", path, errno);
  std::size_t done = 0;
  bool ok = ::fchmod(fd, 0666 & ~kUmask) == 0 && write_all(fd, text, done) && ::fsync(fd) == 0;
  const int e = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return io_error("cannot write", path, e);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int re = errno;
    ::unlink(tmp.c_str());
    return io_error("cannot write", path, re);
  }
  return {};
}

LineFile::~LineFile() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

std::string LineFile::open(const std::string& path, bool overwrite) {
  std::string error;
  fd_ = open_output(path, overwrite, error);
  path_ = path;
  if (fd_ < 0) return fmt::format("cannot write {}: {}", what_, error);
  return {};
}

void LineFile::fail(int error_number) {
  if (error_.empty()) error_ = io_error(fmt::format("writing {}", what_), path_, error_number);
}

bool LineFile::append(std::string_view line) {
  if (fd_ < 0 || failed()) return false;
  struct stat st {};
  const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  std::size_t done = 0;
  if (write_all(fd_, line, done)) return true;
  const int e = errno;
  // Only this process appends to the file: cut the part of the line that
  // reached it, so the record ends on a whole line.
  // (A failed cut is said, not ignored: glibc's fortified ftruncate insists.)
  const bool cut_failed = done > 0 && regular && ::ftruncate(fd_, st.st_size) != 0;
  fail(e);
  if (cut_failed) error_ += "; the part of the line written could not be cut off (a reader refuses that last line)";
  return false;
}

bool LineFile::sync() {
  if (fd_ < 0 || failed()) return false;
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {  // EINVAL: a device that cannot sync (/dev/full)
    fail(errno);
    return false;
  }
  return true;
}

}  // namespace fb
