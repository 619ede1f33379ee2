// NCCL's debug output, captured per process for path provenance. NCCL reads
// its debug settings once, at its first call, so this points them at a file
// before then: NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS with INIT and GRAPH
// (nccl_debug_settings says how a user's values are kept or changed, and
// what is said about it), and NCCL_DEBUG_FILE to a temporary file unless the
// user named one (then that file is read). Nothing NCCL logs there is printed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fb {

class NcclDebugLog {
 public:
  // The process's log, set up on first use; call before any NCCL call.
  static NcclDebugLog& get();
  ~NcclDebugLog();

  // The file's size now (0 when it cannot be read): where the lines to come
  // begin. NCCL truncates the file at its first call, before any communicator.
  std::uint64_t size() const;
  // The text from `offset` to the end ("" when the file cannot be read).
  [[nodiscard]] std::string read_from(std::uint64_t offset) const;
  const std::string& path() const { return path_; }
  // What was changed in the user's settings, or why paths will read
  // "unknown", for the run to say once (backends never print).
  const std::vector<std::string>& notes() const { return notes_; }
  // " (NCCL_DEBUG_SUBSYS=^INIT hides ...)" after an "unknown" path; "" when the settings let NCCL say.
  [[nodiscard]] const std::string& unknown_hint() const { return unknown_hint_; }

 private:
  NcclDebugLog();
  std::string path_;
  std::vector<std::string> notes_;
  std::string unknown_hint_;
  bool owned_ = false;  // ours to delete at exit
};

// NCCL_DEBUG and NCCL_DEBUG_SUBSYS as fabricbench sets them, from the
// user's values (null: unset). NCCL prints the transport lines at INFO under
// the INIT subsystem (and P2P, SHM, NET), the topology's path types under
// GRAPH (src/transport/*.cc, src/graph/search.cc). A level below INFO is
// raised, saying so; a positive subsystem list without INIT or GRAPH gets them
// added, saying so; a "^..." list that excludes INIT is kept (the user asked)
// and makes every NCCL path "unknown", saying why. Names compare without case,
// as NCCL's do.
struct NcclDebugSettings {
  std::string level;
  std::string subsys;
  bool hides_transports = false;
  std::vector<std::string> notes;
};
NcclDebugSettings nccl_debug_settings(const char* level, const char* subsys);

// NCCL_DEBUG_FILE's pattern expanded as NCCL does: %h the host name up to its
// first '.', %p the process id, %% a percent sign.
std::string expand_nccl_debug_file(const std::string& pattern, const std::string& host, long pid);

}  // namespace fb
