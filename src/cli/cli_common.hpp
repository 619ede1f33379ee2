// Small helpers the subcommands share.
#pragma once

#include <string>

namespace fb::cli {

// Now, UTC, ISO 8601: "2026-11-29T10:04:05Z".
std::string utc_now();

}  // namespace fb::cli
