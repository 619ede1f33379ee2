// The one owner of reading a file a command was given as input (records,
// nccl-tests output, NCCL INFO logs, profiles, workloads): only a regular
// file, or standard input as "-" where the command reads a stream, and never
// more than a ceiling. /dev/zero once made `report nccl-log`, `report import`
// and `check --results` read until memory ran out, a FIFO left them waiting
// forever, and a folder ended with exit 3 and a raw exception.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fb {

// The ceiling for records and logs: FABRICBENCH_MAX_INPUT_MIB MiB (default
// kDefaultMaxInputMib). Throws UsageError when the variable is not a whole
// number above 0.
inline constexpr std::uintmax_t kDefaultMaxInputMib = 256;
std::uintmax_t max_input_bytes();

// The ceiling for a file a person writes (a profile, a workload, quotes): a
// page of YAML; a bigger file is not one.
inline constexpr std::uintmax_t kMaxConfigBytes = 16ull << 20;

struct InputRules {
  bool stdin_ok = false;        // "-" reads standard input (bounded like a file)
  std::uintmax_t max_bytes = 0;  // 0: max_input_bytes(), which the user can raise
};

// Throws UsageError naming `what` (e.g. "--results"), `path` and the fix when
// `path` is missing, a folder, not a regular file, or above the ceiling.
void check_input_file(std::string_view what, const std::string& path, InputRules rules = {});

// The whole text of `path`, checked as above; standard input past the
// ceiling is refused the same way.
std::string read_input_file(std::string_view what, const std::string& path, InputRules rules = {});

}  // namespace fb
