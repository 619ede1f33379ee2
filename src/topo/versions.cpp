// CUDA's version encoding as text. The versions themselves come from the GPU
// plugins (topo links no CUDA or NCCL library).
#include <fmt/format.h>

#include "topo_internal.hpp"

namespace fb::topo {

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace fb::topo
