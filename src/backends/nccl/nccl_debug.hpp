// NCCL's debug output, captured per process for path provenance. NCCL reads
// its debug settings once, at its first call, so this points them at a file
// before then: NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH unless the
// user set them, and NCCL_DEBUG_FILE to a temporary file unless the user
// named one (then that file is read). Nothing NCCL logs there is printed.
#pragma once

#include <cstdint>
#include <string>

namespace fb {

class NcclDebugLog {
 public:
  // The process's log, set up on first use; call before any NCCL call.
  static NcclDebugLog& get();
  ~NcclDebugLog();

  // Where a new communicator's lines begin: 0 for the first one of the
  // process (NCCL truncates the file when it starts logging), then the
  // file's size at the time.
  std::uint64_t start_offset();
  // The text from `offset` to the end ("" when the file cannot be read).
  std::string read_from(std::uint64_t offset) const;
  const std::string& path() const { return path_; }

 private:
  NcclDebugLog();
  std::string path_;
  bool owned_ = false;  // ours to delete at exit
  bool started_ = false;
};

// NCCL_DEBUG_FILE's pattern expanded as NCCL does: %h the host name up to its
// first '.', %p the process id, %% a percent sign.
std::string expand_nccl_debug_file(const std::string& pattern, const std::string& host, long pid);

}  // namespace fb
