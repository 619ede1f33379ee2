#include "error_text.hpp"

#include <fmt/format.h>

#include "fabricbench/core/comm.hpp"

namespace fb::gpu {

std::string error_text(const char* call, const std::string& what, int device) {
  return fmt::format("{} failed on rank {} (host {}, GPU {}): {}", call, world_rank(), host_name(), device, what);
}

}  // namespace fb::gpu
