// Mixed GPU generations: the data-parallel step waits on the slowest model;
// a pipeline split in proportion to each group's rate evens the stages.
#include "fabricbench/model/mixed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/formulas.hpp"

namespace fb::model {
namespace {

int parse_count(std::string_view text, std::string_view entry, std::string_view what) {
  int n = 0;
  std::size_t used = 0;
  try {
    n = std::stoi(std::string(text), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || n < 1 || n > 1000000)
    throw UsageError(fmt::format("{} '{}': the count after ':' is a whole number of GPUs from 1 to 1000000", what,
                                 entry));
  return n;
}

// A step's work in its layers: products and their non-GEMM work (the
// optimizer step is not the layers').
double layer_work_us(const StepCost& s) { return s.compute_us + s.non_gemm_us - s.optimizer_us; }

// One stage's compute per step: its share of the layers, on its GPUs alone.
double stage_us(int layers, int total_layers, const MixedGroup& g, int all_gpus) {
  return static_cast<double>(layers) / total_layers * (static_cast<double>(all_gpus) / g.group.count) *
         layer_work_us(g.uniform);
}

PipelineSplit split_with(std::vector<int> layers, const MixedStep& m, int total_layers, int all_gpus) {
  PipelineSplit s;
  for (std::size_t i = 0; i < layers.size(); ++i)
    s.stage_us.push_back(stage_us(layers[i], total_layers, m.groups[i], all_gpus));
  s.layers = std::move(layers);
  const double slowest = *std::max_element(s.stage_us.begin(), s.stage_us.end());
  s.bubble_us = slowest * bubble_fraction(static_cast<int>(s.layers.size()), 1, m.micro_batches);
  s.step_us = slowest + s.bubble_us;
  return s;
}

}  // namespace

std::vector<GpuGroup> parse_gpu_mix(std::string_view text, const Presets& presets, std::string_view what) {
  std::vector<GpuGroup> mix;
  std::size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view entry = text.substr(at, comma - at);
    const std::size_t colon = entry.find(':');
    if (entry.empty() || colon == std::string_view::npos || colon == 0)
      throw UsageError(fmt::format("{} '{}': give GPU:COUNT entries, comma-separated (a100-80gb:8,rtx-4090:8)", what,
                                   entry));
    GpuGroup g;
    g.gpu = presets.gpu(entry.substr(0, colon), what).name;
    g.count = parse_count(entry.substr(colon + 1), entry, what);
    mix.push_back(std::move(g));
    at = comma + 1;
  }
  if (mix.empty())
    throw UsageError(fmt::format("{} is empty: give GPU:COUNT entries, comma-separated (a100-80gb:8,rtx-4090:8)", what));
  return mix;
}

std::vector<int> even_layers(int layers, std::size_t stages) {
  std::vector<int> out(stages, layers / static_cast<int>(stages));
  for (int i = 0; i < layers % static_cast<int>(stages); ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

std::vector<int> proportional_layers(int layers, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> ideal;
  std::vector<int> out;
  for (const double wgt : weights) {
    ideal.push_back(layers * wgt / sum);
    out.push_back(std::max(1, static_cast<int>(std::floor(ideal.back()))));
  }
  const auto short_of = [&](std::size_t i) { return ideal[i] - out[i]; };
  std::vector<std::size_t> order(out.size());
  std::iota(order.begin(), order.end(), 0);
  int total = std::accumulate(out.begin(), out.end(), 0);
  while (total < layers) {  // the stage furthest below its share first
    ++out[*std::max_element(order.begin(), order.end(),
                            [&](std::size_t a, std::size_t b) { return short_of(a) < short_of(b); })];
    ++total;
  }
  while (total > layers) {  // stages raised to one layer pushed others over
    std::size_t most = order.size();
    for (const std::size_t i : order)
      if (out[i] > 1 && (most == order.size() || short_of(i) < short_of(most))) most = i;
    --out[most];
    --total;
  }
  return out;
}

MixedStep predict_mixed(const Workload& w, const std::vector<GpuGroup>& mix, const Fabric& fabric,
                        const Presets& presets, double exposed_target) {
  const int gpus = w.cluster.nodes * w.cluster.gpus_per_node;
  int given = 0;
  for (const auto& g : mix) given += g.count;
  if (given != gpus)
    throw UsageError(fmt::format("--gpus: the mix has {} GPUs, the workload '{}' {} ({} nodes x {}): give counts "
                                 "that add up to it",
                                 given, w.name, gpus, w.cluster.nodes, w.cluster.gpus_per_node));
  MixedStep m;
  for (const auto& g : mix) {
    Workload one = w;
    one.cluster.gpu = g.gpu;
    MixedGroup mg;
    mg.group = g;
    mg.uniform = predict_step(one, fabric, presets, exposed_target);
    mg.busy_us = mg.uniform.compute_us + mg.uniform.non_gemm_us + mg.uniform.imbalance_us + mg.uniform.bubble_us;
    m.groups.push_back(std::move(mg));
  }
  for (std::size_t i = 1; i < m.groups.size(); ++i)
    if (m.groups[i].busy_us > m.groups[m.slowest].busy_us) m.slowest = i;
  const MixedGroup& slow = m.groups[m.slowest];
  m.dp_step_us = slow.uniform.step_us;
  for (auto& g : m.groups) {
    g.wait_us = slow.busy_us - g.busy_us;
    g.wait_share = g.wait_us / m.dp_step_us;
  }
  m.micro_batches = std::max(1, slow.uniform.parallel.micro_batches);
  const auto stages = static_cast<int>(mix.size());
  if (!w.transformer() || w.layers < stages) {
    m.no_pipeline = fmt::format("no pipeline split: {} stages need a transformer with at least as many layers ({} has "
                                "{})",
                                stages, w.name, w.layers);
    return m;
  }
  m.has_pipeline = true;
  std::vector<double> rates;  // GPUs x rate: a group's layers per unit time
  for (const auto& g : m.groups) rates.push_back(g.group.count / layer_work_us(g.uniform));
  m.uniform = split_with(even_layers(w.layers, mix.size()), m, w.layers, gpus);
  m.proportional = split_with(proportional_layers(w.layers, rates), m, w.layers, gpus);
  return m;
}

}  // namespace fb::model
