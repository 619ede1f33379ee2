// Where one rank's files live under --path, and their removal whatever ends
// the run. Everything is made through descriptors (mkdirat, openat with
// O_NOFOLLOW | O_EXCL), so nothing is written outside the folder given,
// through a link planted in it, or over a file that was there:
//
//   PATH/fabricbench-storage-RUNID/        the run's folder, 0700 (one per filesystem:
//                                          every rank that sees it uses it)
//   PATH/fabricbench-storage-RUNID/rankN/  this rank's files
//
// A large sequential file is unlinked as soon as it is made (its descriptor
// keeps it), so a SIGKILL leaves no data behind; small files are read back by
// name, so each name is kept on a list that clean() removes. clean() runs at
// the end, on an exception, from the watchdog when it ends the run (hang,
// lost rank, signal) and from storage's own signal handler (signals.hpp)
// when there is no watchdog; and if the process dies before it can (SIGKILL),
// a reaper process removes what is left (reaper.hpp).
#pragma once

#include <sys/statvfs.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "fabricbench/storage/reaper.hpp"

namespace fb::storage {

// "fabricbench-storage-20261201T221152Z-ec2c274ced0ec601"
std::string run_folder_name(const std::string& run_id);

// The problem with `path` as a folder to measure in, naming it and what to
// do ("" = none): missing, not a folder, on a read-only mount, not writable.
// `flag` names the option in the message ("--path").
[[nodiscard]] std::string check_folder(const std::string& path, const std::string& flag);

class Workspace {
 public:
  Workspace();
  ~Workspace();  // clean(), then the descriptors closed
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // Each returns "" or the problem, naming the folder.
  [[nodiscard]] std::string open_base(const std::string& path, const std::string& flag);
  std::string make_run_folder(const std::string& name);  // mkdir; one that exists is refused
  // Uses the run folder another rank made on this filesystem. False (and no
  // error) when it is not there: this rank's --path is another filesystem.
  bool find_run_folder(const std::string& name, std::string& error);
  std::string make_rank_folder(int rank);

  // A new file in this rank's folder, opened with `flags` (O_RDWR,
  // O_DIRECT ...) plus O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC. With
  // `keep_name` the name is listed for clean(); without, it is unlinked at
  // once. -1 with errno set on failure, ECANCELED once clean() has run.
  int create(const std::string& name, int flags, bool keep_name);
  // Opens a file made by create(..., true): -1 with errno set on failure.
  int open_file(const std::string& name, int flags);
  // Unlinks a listed file; "" or the problem (the file then stays listed for clean()).
  [[nodiscard]] std::string remove(const std::string& name);

  // Unlinks every listed file and this rank's folder, then the run folder
  // when no other rank's is left in it. Idempotent and thread-safe; create()
  // refuses afterwards. Errors are ignored: it runs while the job ends.
  void clean() noexcept;
  // Files still listed (for tests and the end-of-run check).
  std::size_t listed() const;

  // The filesystem's free space for an unprivileged writer (f_bavail).
  bool free_bytes(std::uint64_t& bytes, std::string& error) const;
  const std::string& base_path() const { return base_path_; }
  std::string rank_path() const;
  bool run_folder_is_own() const { return made_run_folder_; }

 private:
  mutable std::mutex mutex_;
  std::string base_path_;
  std::string run_name_;
  std::string rank_name_;
  int base_fd_ = -1;
  int run_fd_ = -1;
  int rank_fd_ = -1;
  bool made_run_folder_ = false;
  bool cleaned_ = false;
  std::set<std::string> names_;
  Reaper reaper_;  // removes what is left if this process dies (reaper.hpp)
};

// Cleans every Workspace alive in this process: what the watchdog's abort
// hook and the signal handler's thread call.
void clean_all_workspaces() noexcept;

}  // namespace fb::storage
