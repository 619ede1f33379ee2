// What the GPU backends share: the rank's GPU and the --graph option, taken
// in setup(), and device memory checked per size rather than up front; every
// device call through the device layer they are given (devices.hpp).
#pragma once

#include <fmt/format.h>

#include "cuda_common/gpu_memory.hpp"
#include "cuda_common/numa_policy.hpp"
#include "fabricbench/core/backend.hpp"
#include "gpu_backends.hpp"

namespace fb::gpu {

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(Devices& devices) : devices_(devices) {}

  // Places the rank once: later calls (the sweeps of a profile, then its pair
  // matrix) take their options and keep the placement. Every rank makes the
  // same calls with the same options, so every rank takes the same branch.
  Support setup(const Comm& world, const RunOptions& options) override {
    graph_ = options.graph;
    if (placed_ && options.device != device_option_)
      return Support::no(fmt::format("--device {}: this run already placed its ranks with --device {}",
                                     options.device, device_option_));
    if (!placed_) {
      placement_ = place_on_gpu(world, options.device, gpu_, devices_);
      device_option_ = options.device;
      placed_ = true;
    }
    return placement_;
  }
  bool simulated() const override { return devices_.simulated(); }
  bool on_gpus() const override { return true; }
  // A size that does not fit is skipped by BackendGroup::allocate, not refused here.
  Support fits(std::uint64_t, int) const override { return Support::yes(); }
  // The GPU's local CPUs: its rank is timed there, not on CPU 0 of the other socket.
  std::vector<int> near_cpus() const override {
    return gpu_.pci_bus_id.empty() ? std::vector<int>{} : local_cpus_of_pci("/", gpu_.pci_bus_id);
  }

 protected:
  Devices& devices_;
  GpuPlacement gpu_;
  bool graph_ = false;

 private:
  bool placed_ = false;
  int device_option_ = -1;
  Support placement_;
};

// Input and output buffers both sized for `spec`'s larger side (in-place
// variants keep their input in the output buffer); "no" says what did not fit.
Support make_room(Buffer& in, Buffer& out, const OpSpec& spec);

}  // namespace fb::gpu
