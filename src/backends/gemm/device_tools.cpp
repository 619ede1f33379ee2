#include "device_tools.hpp"

#include "gemm_compute.hpp"
#include "gemm_probe.hpp"
#include "gpu_backends.hpp"

namespace fb::gpu {

Support DeviceTools::place(const Comm& world, int device_option, GpuPlacement& out) const {
  return place_on_gpu(world, device_option, out, devices_);
}

GemmResult DeviceTools::run_gemm(const GemmSpec& spec, int device) const {
  return fb::run_gemm(devices_, blas_, spec, device);
}

std::unique_ptr<GemmCompute> DeviceTools::make_gemm_compute(const StepComputeSpec& spec, int device) const {
  return fb::make_gemm_compute(devices_, blas_, spec, device);
}

}  // namespace fb::gpu
