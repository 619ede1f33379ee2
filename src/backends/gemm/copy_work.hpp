// The step's memory-bound work on a GPU: SM copies between two device
// buffers on the products' stream, each reading and writing `bytes`. A
// norm, an activation or the optimizer streams its tensors through HBM the
// same way; a copy is the simplest kernel that does only that, and the
// device layer has it (DeviceStream::sm_copy). Plain C++: the same code runs
// on the host double.
#pragma once

#include <cstdint>

#include "cuda_common/gpu_memory.hpp"

namespace fb::gpu {

class CopyWork {
 public:
  // Allocates both buffers on `device` (current; after the products'
  // matrices): UsageError naming the size when they do not fit; then times
  // kIters copies after kWarmup.
  CopyWork(Devices& devices, DeviceStream& stream, int device, std::uint64_t bytes);
  void copy();  // queue one on the stream; does not wait
  double copy_us() const { return copy_us_; }
  std::uint64_t bytes() const { return bytes_; }
  // Read and written, per second, by one copy at the calibrated time.
  double gbps() const { return copy_us_ > 0 ? 2.0 * static_cast<double>(bytes_) / (copy_us_ * 1e3) : 0; }

  static constexpr int kWarmup = 3;
  static constexpr int kIters = 10;

 private:
  DeviceStream& stream_;
  std::uint64_t bytes_;
  Buffer src_, dst_;
  int sm_count_;
  double copy_us_ = 0;
};

}  // namespace fb::gpu
