// Every file a command writes is opened here: never through a symbolic link
// (O_NOFOLLOW), never over an existing file unless the user said
// --overwrite (O_EXCL), temporaries made exclusively beside their target
// (mkstemp, then rename), output folders another user cannot plant files in.
// Rows are appended whole or not at all, and a failed write is an error
// naming the file and errno, never an exception out of a writer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fb {

struct OutputPath {
  std::string path;  // "" = not asked for
  std::string flag;  // "--out", "check.json", ... for messages
};

// Before anything runs (rank 0): "" when `path` can be written, else why:
// a symbolic link, a folder, a file that exists (without `overwrite`), a
// folder that does not exist or is not writable, something not a regular
// file or a character device (a FIFO would block the job).
[[nodiscard]] std::string check_output(const std::string& path, const std::string& flag, bool overwrite);
// Every output of one command, and no two of them on one file.
std::string check_outputs(const std::vector<OutputPath>& outputs, bool overwrite);

// "" unless the file `output` already is one of `inputs` (the same device and
// inode: through a link or another spelling of the path too); then why it is
// refused, naming both. `report html x.jsonl -o x.jsonl --overwrite` once
// replaced the only copy of the record with the page made from it.
[[nodiscard]] std::string check_not_an_input(const std::string& output, const std::string& flag,
                                             const std::vector<std::string>& inputs);
// An output folder (check --out-dir): owned by this user or root, and not
// writable by group or others unless sticky (/tmp): in such a folder another
// user could plant a file or link under the name fabricbench is about to use.
std::string check_output_dir(const std::string& dir, const std::string& flag);

// Opens `path` for writing, never through a link: O_EXCL unless `overwrite`
// (then O_TRUNC). Returns the descriptor, or -1 with `error` naming the
// path and errno.
int open_output(const std::string& path, bool overwrite, std::string& error);

// Writes `text` to a temporary made with mkstemp in the folder of `path`,
// fsyncs it and renames it over `path`: a reader never sees half a file, and
// no existing file or link under a guessable name is written through. What
// `path` names must be a regular file or nothing. Returns "" or the problem.
[[nodiscard]] std::string write_file_atomically(const std::string& path, std::string_view text);

// "<what> '<path>': <strerror> (errno N)".
std::string io_error(std::string_view what, const std::string& path, int error_number);

// A file of lines (the record, a CSV). Not thread-safe: its owner locks.
class LineFile {
 public:
  explicit LineFile(std::string what) : what_(std::move(what)) {}
  ~LineFile();
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;

  // "" or the problem.
  [[nodiscard]] std::string open(const std::string& path, bool overwrite);
  const std::string& path() const { return path_; }
  // Appends `line` (its newline included) whole or not at all: after a short
  // write (a full disk, a file size limit) the file is cut back to where the
  // line began. After the first failure nothing more is written, so the file
  // never has a hole. False when the line is not in the file.
  bool append(std::string_view line);
  // fsync; a failure counts as a write error.
  bool sync();
  // "" while every write succeeded, else the first failure.
  [[nodiscard]] const std::string& error() const { return error_; }
  bool failed() const { return !error_.empty(); }

 private:
  void fail(int error_number);
  std::string what_;  // "results file", "CSV file"
  int fd_ = -1;
  std::string path_;
  std::string error_;
};

}  // namespace fb
