// The device layer on the CUDA runtime: each call forwards to CUDA (or to the
// project's kernels) and checks its return code; the decisions stay in the
// backends' plain code above it (devices.hpp).
#pragma once

#include "devices.hpp"

namespace fb::gpu {

// This process's CUDA devices (one instance per process: CUDA's state is).
Devices& cuda_devices();

// Makes `device` current for the lifetime of the guard; best effort, never
// throws (it runs in destructors): a failure shows in the next call.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace fb::gpu
