// Exit codes and the two kinds of failure every command distinguishes.
#pragma once

#include <stdexcept>
#include <string>

namespace fb {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,    // the run finished but found a problem (wrong elements, a failed rule)
  kExitUsage = 2,     // bad input: flags, files, profiles; nothing was measured
  kExitRunError = 3,  // the run itself could not finish (hang, lost rank, backend error)
};

// Bad input. The message names the input and what is allowed instead.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The run could not go on (a backend call failed, a rank was lost).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fb
