// How storage names a failed system call's errno in its messages.
#pragma once

#include <fmt/format.h>

#include <cstring>
#include <string>

namespace fb::storage {

inline std::string errno_text(int e) { return fmt::format("{} (errno {})", std::strerror(e), e); }

}  // namespace fb::storage
