// Memory per GPU from formulas.cpp (ZeRO model states, Korthikanti activations).
#include "fabricbench/model/memory.hpp"

#include <cmath>

#include "fabricbench/model/formulas.hpp"

namespace fb::model {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double activations(const Workload& w, const Parallel& p, int tp) {
  return activation_bytes({w.micro_batch, w.seq_len, w.hidden, w.heads, w.layers / p.pp, tp, p.pp, p.micro_batches,
                           w.act_bytes, w.recompute, w.flash_attention});
}

double total(const Workload& w, const Parallel& p, int zero, int tp, int dp) {
  return model_state_bytes(w.params / (tp * p.pp), zero, dp) + activations(w, p, tp);
}

// States are a + b/dp: the smallest dp with a + b/dp + activations <= capacity.
int smallest_dp(const Workload& w, const Parallel& p, int zero, double capacity) {
  const double psi = w.params / (p.tp * p.pp);
  const double a = model_state_bytes(psi, zero, 1 << 30);  // the unsharded part, dp -> infinity
  const double b = model_state_bytes(psi, zero, 1) - a;
  const double room = capacity - activations(w, p, p.tp) - a;
  if (room <= 0) return 0;
  if (b <= 0) return 1;
  const double dp = std::ceil(b / room);
  return dp > 1e9 ? 0 : static_cast<int>(dp);
}

// The smallest tp (a divisor of the node, of the heads and of the GPUs left
// after pp) that fits with dp = gpus / (tp * pp).
int smallest_tp(const Workload& w, const Parallel& p, int zero, double capacity) {
  for (int tp = 1; tp <= p.gpus_per_node; ++tp) {
    if (p.gpus_per_node % tp != 0 || w.heads % tp != 0 || p.gpus % (tp * p.pp) != 0) continue;
    if (total(w, p, zero, tp, p.gpus / (tp * p.pp)) <= capacity) return tp;
  }
  return 0;
}

}  // namespace

std::vector<MemoryFit> memory_fit(const Workload& w, const GpuPreset& gpu) {
  const Parallel p = resolve_parallel(w);
  const double capacity = gpu.memory_gib * kGiB;
  std::vector<MemoryFit> out;
  for (int zero = 0; zero <= 3; ++zero) {
    MemoryFit m;
    m.zero = zero;
    m.states_bytes = model_state_bytes(w.params / (p.tp * p.pp), zero, p.dp);
    m.activation_bytes = activations(w, p, p.tp);
    m.total_bytes = m.states_bytes + m.activation_bytes;
    m.capacity_bytes = capacity;
    m.fits = m.total_bytes <= capacity;
    m.smallest_dp = smallest_dp(w, p, zero, capacity);
    m.smallest_tp = smallest_tp(w, p, zero, capacity);
    out.push_back(m);
  }
  return out;
}

}  // namespace fb::model
