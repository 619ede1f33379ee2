// A synthetic training step as the executor runs it: compute work per rank
// and the collectives the step issues, each in its parallel group, with how
// much of the compute it may hide under. The model builds one from a
// workload (model/step.hpp); tests build them by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricbench/core/types.hpp"

namespace fb::step {

// Which ranks a collective spans. Ranks are laid out tensor-parallel
// fastest, then data-parallel, then pipeline (the model's order,
// model/step.cpp): TP stays inside a node, DP and PP cross nodes.
enum class Group { world, tp, pp, dp };
std::string_view name(Group g);

struct StepComm {
  std::string name;            // "DP gradient all-reduce"
  Op op = Op::all_reduce;
  Group group = Group::dp;
  std::uint64_t bytes = 0;     // per call, nccl-tests convention (layout.hpp)
  int calls = 1;               // per step
  // Fraction of the step's compute, at its end, under which the calls are
  // issued and may run (0: each call blocks compute, fully exposed).
  double window = 0;
};

struct StepSchedule {
  double compute_us = 0;  // the products, per rank per step, at the kernel's calibrated rate
  // Of compute_us: attention's kernel at its own curve's rate (model/attention.hpp),
  // which the GEMM rate a calibration scales does not move.
  double attention_us = 0;
  // The memory-bound work beside the products (model/non_gemm.hpp), as the
  // model counts it: the layers' norms, activations and residual adds run
  // inside the compute stretches, where their passes are; the optimizer step,
  // `optimizer_us` of it, runs once the step's last collective is done (the
  // model puts it after the pipeline drains, hiding nothing). Kept apart from
  // `compute_us` so the output can show each; 0 where the model's rate is a
  // whole step's (mfu, tflops) and holds this work already.
  double non_gemm_us = 0;
  double optimizer_us = 0;
  // What the compute stretches run in all: the products and the layers' non-GEMM work.
  double layers_us() const { return compute_us + non_gemm_us - optimizer_us; }
  std::vector<StepComm> comms;
  int tp = 1;
  int pp = 1;
  int dp = 1;  // tp * pp * dp = ranks
};

// The group of `g` that `rank` belongs to, as a colour for MPI_Comm_split.
int group_colour(Group g, int rank, const StepSchedule& s);

// Throws fb::UsageError when the degrees do not multiply to `ranks` or a
// comm's fields are out of range.
void validate(const StepSchedule& s, int ranks);

}  // namespace fb::step
