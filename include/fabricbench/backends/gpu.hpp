// The GPU tools the commands use beside the backends: where a rank runs (one
// GPU per rank) and cuBLAS matrix products (`fabricbench gemm`, the step's GPU
// compute). They come from the gemm plugin; gpu_tools() says why not when it
// is absent or there is no usable GPU here. Plain C++: no CUDA header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/compute_kernel.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

// The lowest compute capability of the job (every rank holds the same).
struct GpuCapability {
  int major = 0;  // 0: this rank has no GPU
  int minor = 0;
  int rank = -1;
  std::string host;
};

// The GPU a rank runs on.
struct GpuPlacement {
  int device = -1;        // CUDA device index, current after place()
  int local_rank = 0;     // the rank's index on its node
  int device_count = 0;   // CUDA devices this process sees
  std::string name;       // "NVIDIA H200"
  std::string pci_bus_id; // "0000:1B:00.0"
  std::uint64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  GpuCapability lowest;
};

// The datatypes a GEMM runs in (`gemm -d`, the step's products), one list
// for the runner, the command and the step: bf16 and fp16 (cublasGemmEx),
// fp32 without TF32, fp8 e4m3 (cuBLASLt, C in bfloat16).
constexpr bool gemm_offers(Dtype d) {
  return d == Dtype::bfloat16 || d == Dtype::half || d == Dtype::float32 || d == Dtype::fp8_e4m3;
}
inline constexpr const char* kGemmDtypes = "bf16, fp16, fp32 or fp8_e4m3";

struct GemmSpec {
  Dtype dtype = Dtype::bfloat16;  // bfloat16, half, float32 (no TF32) or fp8_e4m3 (C in bfloat16)
  int m = 8192;
  int n = 8192;
  int k = 8192;
  int iters = 20;
  int warmup = 5;
};

struct GemmResult {
  GemmSpec spec;
  TimeStats time;       // per product
  double tflops = 0;    // 2mnk / median time, 1e12 flop/s
};

// What the step's GPU compute is made of: products of `gemm`, and for the
// memory-bound work SM copies between two device buffers of `copy_bytes`.
struct StepComputeSpec {
  GemmSpec gemm;
  // 256 MiB: five times an H100's or H200's 50 MB L2, so the copies stream
  // HBM, as a step's norms and optimizer do over GBs of activations and states.
  std::uint64_t copy_bytes = std::uint64_t{256} << 20;
};

// The step's compute on a GPU: cuBLAS products of one shape and SM copies,
// queued on their own stream, as many as a stretch of compute takes at the
// rates measured when the kernel is made.
class GemmCompute : public ComputeKernel {
 public:
  // Median time of one product at construction, the rate the step runs at.
  virtual double product_us() const = 0;
  // Products queued since construction (calibration not counted).
  virtual std::uint64_t products() const = 0;
  // The same for the copies of the memory-bound work (each reads and writes copy_bytes).
  virtual double copy_us() const = 0;
  virtual std::uint64_t copies() const = 0;
};

class GpuTools {
 public:
  virtual ~GpuTools() = default;
  // "" when this process can use a CUDA device; otherwise why not.
  [[nodiscard]] virtual std::string absent_reason() const = 0;
  // On the host double of the tests: records say their figures are simulated.
  virtual bool simulated() const { return false; }
  // Collective over `world`: picks this rank's device (`device_option`, or
  // its index on its node wrapped to the devices it sees) and makes it
  // current. "No", on the ranks that see it, when there is no GPU or two
  // ranks are on one physical GPU (named by PCI bus id).
  virtual Support place(const Comm& world, int device_option, GpuPlacement& out) const = 0;
  // The device made current on this rank (by place() or a backend's setup); -1 without one.
  virtual int current_device() const = 0;
  // `spec.iters` products timed with events after `spec.warmup`, on `device`
  // (current). RunError when CUDA or cuBLAS fails, UsageError when the
  // matrices do not fit.
  virtual GemmResult run_gemm(const GemmSpec& spec, int device) const = 0;
  // A step's compute kernel on `device`, calibrated at construction.
  virtual std::unique_ptr<GemmCompute> make_gemm_compute(const StepComputeSpec& spec, int device) const = 0;
};

// The gemm plugin's tools; null, with `why` set, when the plugin is absent
// or refused. A loaded plugin may still find no GPU: ask absent_reason().
const GpuTools* gpu_tools(std::string* why);

// "" when a GPU is usable here; otherwise why not (plugin or device).
[[nodiscard]] std::string gpu_absent_reason();

}  // namespace fb
