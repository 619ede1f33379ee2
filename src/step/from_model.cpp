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
    c.window = cost.compute_us > 0 ? std::clamp(item.window_us / cost.compute_us, 0.0, 1.0) : 0.0;
    s.comms.push_back(std::move(c));
  }
  return s;
}

}  // namespace fb::step
