// nccl::Collectives on NCCL itself: each call forwards to NCCL on the CUDA
// stream behind the DeviceStream and reports NCCL's result, deciding nothing.
#pragma once

#include "collectives.hpp"

namespace fb::nccl {

// This process's NCCL (one instance: NCCL's state is per process).
Collectives& cuda_nccl();

}  // namespace fb::nccl
