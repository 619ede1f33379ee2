// The CUDA stream behind a DeviceStream of cuda_devices(), for the vendor
// layers above CUDA (NCCL's calls take the stream).
#pragma once

#include <cuda_runtime_api.h>

#include "devices.hpp"

namespace fb::gpu {

// `stream` must come from cuda_devices().make_stream (std::bad_cast otherwise).
cudaStream_t raw_stream(DeviceStream& stream);

}  // namespace fb::gpu
