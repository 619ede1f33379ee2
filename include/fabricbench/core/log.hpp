// Logging: spdlog on stderr, every line prefixed with the rank.
#pragma once

#include <spdlog/spdlog.h>

namespace fb {

enum class Verbosity { quiet, normal, verbose };

// Installs the default logger for `rank`. Quiet keeps warnings and errors.
void setup_logging(int rank, Verbosity verbosity);

// Messages to the person running a command, on stderr exactly as written
// ("fabricbench check: ..."): no rank or level prefix, and shown whatever -q
// says, as a command's closing lines and its errors always are. Thread-safe
// and flushed on every line; the line needs no trailing newline. Not for
// signal handlers (not async-signal-safe: they write to a pipe instead).
spdlog::logger& user_log();

}  // namespace fb
