// The compute rate a workload's GPUs reach: stated (tflops, MFU) or from a
// GEMM curve at the workload's matrix size. Internal to the model.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model::detail {

struct ComputeRate {
  double tflops = 0;       // achieved hardware TFLOP/s per GPU
  std::string how;         // the assumption, in words
  // Where the rate came from: mfu, stated_tflops, measured_curve (a `gemm`
  // record), stated_curve (a workload's list) or preset_curve (the GPU's
  // published curve, profiles/presets/gpus.yaml).
  std::string source;
  // Where a curve prices a layer shape by shape: each product of
  // layer_gemm_shapes(w), in its order, at the rate priced (of_gemm and any
  // peak scaling included). Empty where one rate holds for all.
  std::vector<double> shape_tflops;
};

// `hardware_over_model`: hardware FLOPs over model FLOPs (recomputation),
// to turn an MFU into a hardware rate.
ComputeRate compute_rate(const Workload& w, const GpuPreset& gpu, const Presets& presets, double hardware_over_model);

// The workload's GEMM size: the cube root of m n k of its MLP up-projection on
// one GPU (m = micro_batch x seq_len, n = 4 hidden / tp, k = hidden), or the
// stated gemm_size.
double gemm_size(const Workload& w);

// Log-log interpolation of the curve; the nearest point's rate outside it.
double gemm_tflops(const GemmCurve& curve, double size);

}  // namespace fb::model::detail
