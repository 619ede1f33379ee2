// How a failed device or library call reads, on any rank of a large job:
// the call, the rank, the host and the GPU, then what went wrong.
#pragma once

#include <string>

namespace fb::gpu {

// "cudaMemcpyAsync failed on rank 3 (host n07, GPU 1): cudaErrorIllegalAddress: an illegal memory access..."
std::string error_text(const char* call, const std::string& what, int device);

}  // namespace fb::gpu
