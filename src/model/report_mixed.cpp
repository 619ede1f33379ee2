// The mixed-generation step as a table and JSON.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <numeric>

#include "fabricbench/model/report.hpp"

namespace fb::model {
namespace {

std::string layers_words(const std::vector<int>& layers) {
  std::string out;
  for (const int n : layers) out += (out.empty() ? "" : "/") + std::to_string(n);
  return out;
}

std::string split_note(const char* name, const PipelineSplit& s, const MixedStep& m) {
  std::string stages;
  for (std::size_t i = 0; i < s.layers.size(); ++i)
    stages += fmt::format("{}{} {} layers {:.3f} s", i ? ", " : "", m.groups[i].group.gpu, s.layers[i],
                          s.stage_us[i] / 1e6);
  return fmt::format("pipeline, {} split ({}): {}; step {:.3f} s with the bubble of {} stages over {} micro-batches",
                     name, layers_words(s.layers), stages, s.step_us / 1e6, s.layers.size(), m.micro_batches);
}

json split_json(const PipelineSplit& s) {
  return {{"layers", s.layers}, {"stage_us", s.stage_us}, {"bubble_us", s.bubble_us}, {"step_us", s.step_us}};
}

}  // namespace

Table mixed_table(const MixedStep& m) {
  Table t;
  t.header = {"gpu", "gpus", "rate_tflops", "own_step_s", "busy_s", "wait_s", "wait_pct"};
  for (const auto& g : m.groups)
    t.rows.push_back({g.group.gpu, std::to_string(g.group.count), cell(g.uniform.rate_tflops, 1),
                      cell(g.uniform.step_us / 1e6, 3), cell(g.busy_us / 1e6, 3), cell(g.wait_us / 1e6, 3),
                      percent(g.wait_share)});
  const MixedGroup& slow = m.groups[m.slowest];
  t.notes.push_back(fmt::format("data parallel: step {:.3f} s, the slowest model's ({}): every rank waits for it at "
                                "the gradient synchronisation",
                                m.dp_step_us / 1e6, slow.group.gpu));
  if (!m.has_pipeline) {
    t.notes.push_back(m.no_pipeline);
  } else {
    t.notes.push_back(split_note("uniform", m.uniform, m));
    t.notes.push_back(split_note("proportional to GPUs x rate", m.proportional, m));
    t.notes.push_back(fmt::format("pipeline: the proportional split is {:.3g}x the uniform one's step (compute and "
                                  "bubble only: the stage sends are the same for both)",
                                  m.proportional.step_us / m.uniform.step_us));
  }
  std::vector<std::pair<std::string, const StepCost*>> rows;
  for (const auto& g : m.groups) rows.emplace_back(g.group.gpu, &g.uniform);
  add_assumptions(t, rows);
  return t;
}

json mixed_json(const std::string& workload, const MixedStep& m) {
  json groups = json::array();
  for (const auto& g : m.groups)
    groups.push_back({{"gpu", g.group.gpu}, {"gpus", g.group.count}, {"rate_tflops", g.uniform.rate_tflops},
                      {"own_step_us", g.uniform.step_us}, {"busy_us", g.busy_us}, {"wait_us", g.wait_us},
                      {"wait_share", g.wait_share}, {"step", step_json(g.uniform)}});
  json out = {{"type", "mixed_step"},   {"workload", workload},
              {"network", m.groups.front().uniform.network}, {"slowest_gpu", m.groups[m.slowest].group.gpu},
              {"dp_step_us", m.dp_step_us}, {"micro_batches", m.micro_batches},
              {"groups", groups}};
  if (m.has_pipeline) {
    out["pipeline"] = {{"uniform", split_json(m.uniform)}, {"proportional", split_json(m.proportional)}};
  } else {
    out["pipeline"] = nullptr;
    out["no_pipeline"] = m.no_pipeline;
  }
  return out;
}

}  // namespace fb::model
