// Memory per GPU from formulas.cpp (ZeRO model states, Korthikanti activations).
#include "fabricbench/model/memory.hpp"

#include <algorithm>
#include <cmath>

#include "fabricbench/model/formulas.hpp"
#include "fabricbench/model/units.hpp"

namespace fb::model {
namespace {

double activations(const Workload& w, const Parallel& p, int tp) {
  if (!w.transformer()) return w.activation_bytes_per_sample * w.micro_batch;
  ActivationShape a{w.micro_batch, w.seq_len,       w.hidden,    w.heads,     p.stage_layers,   tp,
                    p.pp,          p.micro_batches, w.act_bytes, w.recompute, w.flash_attention};
  a.sequence_parallel = w.sequence_parallel;
  return activation_bytes(a);
}

// Parameters of the fullest stage on one GPU at tensor parallelism `tp`.
double stage_params(const Workload& w, const Parallel& p, int tp) {
  return w.params * (static_cast<double>(p.stage_layers) / w.layers) / tp;
}

// ZeRO-3 gathers whole modules before they run: up to
// stage3_max_live_parameters of them are resident at once.
double live_gathered(const Workload& w, double psi, int zero) {
  return zero == 3 ? std::min(psi, w.zero3.max_live) * w.param_bytes : 0.0;
}

double total(const Workload& w, const Parallel& p, int zero, int tp, int dp) {
  const double psi = stage_params(w, p, tp);
  return model_state_bytes(psi, zero, dp, w.grad_memory_bytes) + live_gathered(w, psi, zero) + activations(w, p, tp);
}

// States are a + b/dp: the smallest dp with a + b/dp + the rest <= capacity.
int smallest_dp(const Workload& w, const Parallel& p, int zero, double capacity) {
  const double psi = stage_params(w, p, p.tp);
  const double a = model_state_bytes(psi, zero, 1 << 30, w.grad_memory_bytes);  // the unsharded part
  const double b = model_state_bytes(psi, zero, 1, w.grad_memory_bytes) - a;
  const double room = capacity - activations(w, p, p.tp) - live_gathered(w, psi, zero) - a;
  if (room <= 0) return 0;
  if (b <= 0) return 1;
  const double dp = std::ceil(b / room);
  return dp > 1e9 ? 0 : static_cast<int>(dp);
}

// The smallest tp (a divisor of the node, of the heads and of the GPUs left
// after pp) that fits with dp = gpus / (tp * pp).
int smallest_tp(const Workload& w, const Parallel& p, int zero, double capacity) {
  if (!w.transformer()) return total(w, p, zero, 1, p.dp) <= capacity ? 1 : 0;
  for (int tp = 1; tp <= p.gpus_per_node; ++tp) {
    if (p.gpus_per_node % tp != 0 || w.heads % tp != 0 || p.gpus % (tp * p.pp) != 0) continue;
    if (total(w, p, zero, tp, p.gpus / (tp * p.pp)) <= capacity) return tp;
  }
  return 0;
}

}  // namespace

std::vector<MemoryFit> memory_fit(const Workload& w, const GpuPreset& gpu) {
  const Parallel p = resolve_parallel(w);
  const double capacity = gpu.memory_gib * kBytesPerGiB;
  std::vector<MemoryFit> out;
  for (int zero = 0; zero <= 3; ++zero) {
    MemoryFit m;
    m.zero = zero;
    const double psi = stage_params(w, p, p.tp);
    m.states_bytes = model_state_bytes(psi, zero, p.dp, w.grad_memory_bytes);
    m.gathered_bytes = live_gathered(w, psi, zero);
    m.activation_bytes = activations(w, p, p.tp);
    m.total_bytes = m.states_bytes + m.gathered_bytes + m.activation_bytes;
    m.capacity_bytes = capacity;
    m.fits = m.total_bytes <= capacity;
    m.smallest_dp = smallest_dp(w, p, zero, capacity);
    m.smallest_tp = smallest_tp(w, p, zero, capacity);
    out.push_back(m);
  }
  return out;
}

}  // namespace fb::model
