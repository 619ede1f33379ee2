// What the GPU backends share: the rank's GPU and the --graph option, taken
// in setup(), and device memory checked per size rather than up front.
#pragma once

#include "cuda_common/gpu_memory.hpp"
#include "fabricbench/backends/backend.hpp"
#include "gpu_backends.hpp"

namespace fb::gpu {

class GpuBackend : public Backend {
 public:
  Support setup(const Comm& world, const RunOptions& options) override {
    graph_ = options.graph;
    return place_on_gpu(world, options.device, gpu_);
  }
  // A size that does not fit is skipped by BackendGroup::allocate, not refused here.
  Support fits(std::uint64_t, int) const override { return Support::yes(); }

 protected:
  GpuPlacement gpu_;
  bool graph_ = false;
};

// Input and output buffers both sized for `spec`'s larger side (in-place
// variants keep their input in the output buffer); "no" says what did not fit.
Support make_room(Buffer& in, Buffer& out, const OpSpec& spec);

}  // namespace fb::gpu
