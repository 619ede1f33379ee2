// Logging: spdlog on stderr, every line prefixed with the rank.
#pragma once

#include <spdlog/spdlog.h>

namespace fb {

enum class Verbosity { quiet, normal, verbose };

// Installs the default logger for `rank`. Quiet keeps warnings and errors.
void setup_logging(int rank, Verbosity verbosity);

}  // namespace fb
