#include "step_report.hpp"

#include <fmt/format.h>

#include "fabricbench/model/step.hpp"

namespace fb::cli {
namespace {

using step::Mode;

void scale_rate(model::Workload& w, double factor) {
  if (w.tflops > 0) w.tflops *= factor;
  if (w.mfu > 0) w.mfu *= factor;
}

Prediction predict(const model::Workload& w, const step::StepReport& r, const model::Presets& presets,
                   const std::string& network, std::string basis) {
  const model::StepCost s = model::predict_step(w, model::fabric_for(w, network, presets), presets);
  Prediction p;
  p.basis = std::move(basis);
  p.network = s.network;
  p.node = s.node;
  p.compute_us = s.compute_us;
  p.comm_us = s.comm_us;
  p.exposed_us = s.exposed_us;
  p.step_us = s.compute_us + s.exposed_us;
  p.comm_share = s.comm_us / (s.compute_us + s.comm_us);
  p.exposed_share = s.exposed_us / p.step_us;
  p.efficiency = s.compute_us / p.step_us;
  p.step_diff_pct = 100.0 * (p.step_us - r.step_us()) / r.step_us();
  return p;
}

std::string pct(double x) { return fmt::format("{:.1f}%", 100.0 * x); }

}  // namespace

double calibration_factor(const StepView& v) { return v.schedule.compute_us / v.report.compute_us(); }

std::vector<Prediction> predictions_for(const model::Workload& w, const step::StepReport& r,
                                        const model::Presets& presets, const std::string& network,
                                        const std::string& node) {
  model::Workload stated = w;
  if (!node.empty()) stated.cluster.node = node;
  std::vector<Prediction> out{predict(stated, r, presets, network, "workload rate")};
  model::Workload measured = stated;
  scale_rate(measured, out.front().compute_us / r.compute_us());
  out.push_back(predict(measured, r, presets, network, "measured compute"));
  return out;
}

std::string step_text(const StepView& v) {
  const auto& r = v.report;
  std::string s = fmt::format(
      "# fabricbench step: workload {}, dp {} x tp {} x pp {} = {} ranks, backend {}, compute: {}\n",
      v.workload.name, v.schedule.dp, v.schedule.tp, v.schedule.pp, v.schedule.dp * v.schedule.tp * v.schedule.pp,
      v.backend, v.kernel);
  s += fmt::format("# {:<22} {:>12} {:>12} {:>12} {:>8}\n", "measured (slowest rank)", "median_us", "min_us", "p99_us",
                   "steps");
  for (const auto& m : r.modes)
    s += fmt::format("  {:<22} {:>12.1f} {:>12.1f} {:>12.1f} {:>8}\n", step::name(m.mode), m.step.median_us,
                     m.step.min_us, m.step.p99_us, m.step.iterations);
  s += fmt::format("  communication share {} of compute + communication, {} of the step exposed; efficiency {}; "
                   "overlap hid {:.1f} us; slowest rank {}\n",
                   pct(r.comm_share()), pct(r.exposed_share()), pct(r.efficiency()), r.hidden_us(),
                   r.times(Mode::overlapped).slowest_rank);
  s += fmt::format("# {:<28} {:>5} {:>14} {:>12} {:>7} {:>7} {:>12} {:>12}\n", "collective", "group", "op",
                   "bytes/call", "calls", "window", "us/call", "us/step");
  for (std::size_t i = 0; i < v.schedule.comms.size(); ++i) {
    const auto& c = v.schedule.comms[i];
    s += fmt::format("  {:<28} {:>5} {:>14} {:>12} {:>7} {:>7} {:>12.1f} {:>12.1f}\n", c.name, step::name(c.group),
                     fb::name(c.op), c.bytes, c.calls, pct(c.window), r.comms[i].per_call_us, r.comms[i].per_step_us);
  }
  if (!v.predictions.empty()) {
    s += fmt::format("# {:<18} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8} {:>9}   network / node\n", "model, basis",
                     "compute_us", "comm_us", "exposed_us", "step_us", "share", "exposed", "step diff");
    s += fmt::format("  {:<18} {:>11.1f} {:>11.1f} {:>11.1f} {:>11.1f} {:>8} {:>8} {:>9}\n", "measured",
                     r.compute_us(), r.comm_us(), r.exposed_us(), r.step_us(), pct(r.comm_share()),
                     pct(r.exposed_share()), "");
    for (const auto& p : v.predictions)
      s += fmt::format("  {:<18} {:>11.1f} {:>11.1f} {:>11.1f} {:>11.1f} {:>8} {:>8} {:>+8.1f}%   {} / {}\n", p.basis,
                       p.compute_us, p.comm_us, p.exposed_us, p.step_us, pct(p.comm_share), pct(p.exposed_share),
                       p.step_diff_pct, p.network, p.node);
    s += "  (the model's step leaves out the pipeline bubble, which the executor does not run)\n";
  }
  return s;
}

std::vector<RecordLine> step_lines(const StepView& v) {
  const auto& r = v.report;
  StepLine line;
  line.workload = v.workload.name;
  line.backend = v.backend;
  line.dp = v.schedule.dp;
  line.tp = v.schedule.tp;
  line.pp = v.schedule.pp;
  line.kernel = v.kernel;
  line.planned_compute_us = v.schedule.compute_us;
  for (const auto& m : r.modes)
    line.modes.push_back({std::string(step::name(m.mode)), m.step.iterations, m.step.min_us, m.step.median_us,
                          m.step.mean_us, m.step.p99_us, m.step.max_us, m.slowest_rank, m.slowest_rank_mean_us});
  line.comm_share = r.comm_share();
  line.exposed_share = r.exposed_share();
  line.efficiency = r.efficiency();
  line.hidden_us = r.hidden_us();
  for (std::size_t i = 0; i < v.schedule.comms.size(); ++i) {
    const auto& c = v.schedule.comms[i];
    line.comms.push_back({c.name, std::string(step::name(c.group)), std::string(fb::name(c.op)), c.bytes, c.calls,
                          c.window, r.comms[i].per_call_us, r.comms[i].per_step_us});
  }
  std::vector<RecordLine> lines{std::move(line)};
  for (const auto& p : v.predictions)
    lines.push_back(StepModelLine{p.basis, p.network, p.node, p.compute_us, p.comm_us, p.exposed_us, p.step_us,
                                  p.comm_share, p.exposed_share, p.efficiency, p.step_diff_pct});
  return lines;
}

}  // namespace fb::cli
