#include "fabricbench/step/from_model.hpp"

#include <algorithm>
#include <cmath>

#include "fabricbench/core/errors.hpp"

namespace fb::step {
namespace {

Group group_of(const std::string& g) {
  if (g == "tp") return Group::tp;
  if (g == "pp") return Group::pp;
  if (g == "dp") return Group::dp;
  throw UsageError("step: the model names an unknown parallel group '" + g + "'");
}

}  // namespace

StepSchedule schedule_from(const model::StepCost& cost) {
  StepSchedule s;
  s.compute_us = cost.compute_us;
  s.attention_us = cost.attention_us;
  s.non_gemm_us = cost.non_gemm_us;
  s.optimizer_us = cost.optimizer_us;
  s.tp = cost.parallel.tp;
  s.pp = cost.parallel.pp;
  s.dp = cost.parallel.dp;
  for (const model::CommItem& item : cost.items) {
    StepComm c;
    c.name = item.name;
    c.op = item.op;
    c.group = group_of(item.group);
    c.bytes = static_cast<std::uint64_t>(std::llround(item.bytes_per_call));
    c.calls = static_cast<int>(std::max(1.0, std::round(item.calls)));
    // The model's windows are parts of a stage's passes, non-GEMM work included.
    const double layers_us = s.layers_us();
    c.window = layers_us > 0 ? std::clamp(item.window_us / layers_us, 0.0, 1.0) : 0.0;
    s.comms.push_back(std::move(c));
  }
  return s;
}

}  // namespace fb::step
