// The GPU tools (fabricbench/backends/gpu.hpp) over the device layer and the
// matrix-product library: the gemm plugin makes them over CUDA and cuBLAS,
// the tests over the host doubles (tests/support/sim_devices.hpp, sim_blas.hpp).
#pragma once

#include "blas.hpp"
#include "fabricbench/backends/gpu.hpp"

namespace fb::gpu {

class DeviceTools final : public GpuTools {
 public:
  DeviceTools(Devices& devices, BlasLibrary& blas) : devices_(devices), blas_(blas) {}

  std::string absent_reason() const override { return devices_.absent_reason(); }
  bool simulated() const override { return devices_.simulated(); }
  Support place(const Comm& world, int device_option, GpuPlacement& out) const override;
  int current_device() const override { return devices_.current_device(); }
  GemmResult run_gemm(const GemmSpec& spec, int device) const override;
  std::unique_ptr<GemmCompute> make_gemm_compute(const StepComputeSpec& spec, int device) const override;

 private:
  Devices& devices_;
  BlasLibrary& blas_;
};

}  // namespace fb::gpu
