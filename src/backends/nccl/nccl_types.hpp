// fabricbench datatypes and reductions as NCCL's, and NCCL errors as RunErrors.
#pragma once

#include <nccl.h>

#include <optional>
#include <string>

#include "fabricbench/core/types.hpp"

namespace fb::nccl {

// nullopt when this NCCL has no such type (fp8 before NCCL 2.24).
std::optional<ncclDataType_t> datatype(Dtype dtype);
ncclRedOp_t reduction(RedOp redop);
// "2.28.3" for the library loaded at run time.
std::string version();

// Throws RunError naming the call, the rank, the host and the GPU, with
// NCCL's own last error and where its log is.
void check(ncclResult_t rc, const char* call, ncclComm_t comm, int device);

}  // namespace fb::nccl
