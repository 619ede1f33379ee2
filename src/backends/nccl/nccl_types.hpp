// fabricbench datatypes and reductions as NCCL's, for the plugin's NCCL calls (cuda_nccl.cpp).
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

}  // namespace fb::nccl
