#include "step_report.hpp"

#include <fmt/format.h>

#include "fabricbench/core/text_table.hpp"

namespace fb::cli {
namespace {

using step::Mode;

std::string pct(double x) { return fmt::format("{:.1f}%", 100.0 * x); }

// The step's tables: a "# " head, rows under it, figures right-aligned, one space apart.
TextTable step_table(std::vector<TextColumn> columns) {
  TextTable t;
  t.head_prefix = "# ";
  t.row_prefix = "  ";
  t.note_prefix = "  ";
  for (auto& c : columns) c.gap = " ";
  t.columns = std::move(columns);
  return t;
}

TextColumn name_column(const char* head, std::size_t width) { return {.head = head, .min_width = width}; }
TextColumn figure_column(const char* head, std::size_t width) {
  return {.head = head, .align = Align::right, .min_width = width};
}
std::string us(double x) { return fmt::format("{:.1f}", x); }

std::string modes_text(const step::StepReport& r) {
  TextTable t = step_table({name_column("measured (slowest rank)", 22), figure_column("median_us", 12),
                            figure_column("min_us", 12), figure_column("p99_us", 12), figure_column("steps", 8)});
  for (const auto& m : r.modes)
    t.add_row({std::string(step::name(m.mode)), us(m.step.median_us), us(m.step.min_us), us(m.step.p99_us),
               std::to_string(m.step.iterations)});
  t.notes.push_back(fmt::format("communication share {} of compute + communication, {} of the step exposed; "
                                "efficiency {}; overlap hid {:.1f} us; slowest rank {}",
                                pct(r.comm_share()), pct(r.exposed_share()), pct(r.efficiency()), r.hidden_us(),
                                r.times(Mode::overlapped).slowest_rank));
  return render(t);
}

std::string comms_text(const StepView& v) {
  TextTable t = step_table({name_column("collective", 28), figure_column("group", 5), figure_column("op", 14),
                            figure_column("bytes/call", 12), figure_column("calls", 7), figure_column("window", 7),
                            figure_column("us/call", 12), figure_column("us/step", 12)});
  for (std::size_t i = 0; i < v.schedule.comms.size(); ++i) {
    const auto& c = v.schedule.comms[i];
    t.add_row({c.name, std::string(step::name(c.group)), std::string(fb::name(c.op)), std::to_string(c.bytes),
               std::to_string(c.calls), pct(c.window), us(v.report.comms[i].per_call_us),
               us(v.report.comms[i].per_step_us)});
  }
  return render(t);
}

std::string predictions_text(const StepView& v) {
  const auto& r = v.report;
  TextTable t =
      step_table({name_column("model, basis", 18), figure_column("compute_us", 11), figure_column("non_gemm_us", 12),
                  figure_column("optimizer_us", 13), figure_column("comm_us", 11), figure_column("exposed_us", 11),
                  figure_column("step_us", 11), figure_column("share", 8), figure_column("exposed", 8),
                  figure_column("step diff", 9), name_column("network / node", 0)});
  t.columns.back().gap = "   ";
  t.add_row({"measured", us(r.parts.products_us), us(r.parts.non_gemm_us), us(r.parts.optimizer_us), us(r.comm_us()),
             us(r.exposed_us()), us(r.step_us()), pct(r.comm_share()), pct(r.exposed_share())});
  for (const auto& p : v.predictions)
    t.add_row({p.basis, us(p.compute_us), us(p.non_gemm_us), us(p.optimizer_us), us(p.comm_us), us(p.exposed_us),
               us(p.step_us), pct(p.comm_share), pct(p.exposed_share), fmt::format("{:+.1f}%", p.step_diff_pct),
               p.network + " / " + p.node});
  t.notes.push_back(
      "(compute_us: the products; non_gemm_us: the memory-bound work, optimizer_us of it included; "
      "step_us holds them all. The model's step leaves out the pipeline bubble, which the executor "
      "does not run)");
  return render(t);
}

std::string diff_pct(double model, double measured) {
  return fmt::format("{:+.1f}%", 100.0 * (model - measured) / measured);
}

std::string products_text(const LayerProducts& l) {
  TextTable t =
      step_table({name_column("layer product (slowest GPU)", 27), figure_column("m", 7), figure_column("n", 7),
                  figure_column("k", 7), figure_column("measured_us", 12), figure_column("TFLOP/s", 8),
                  figure_column("model_us", 10), figure_column("model TFLOP/s", 13), figure_column("model diff", 10),
                  figure_column("rank", 5)});
  for (const ProductFigure& p : l.products)
    t.add_row({p.shape.name, std::to_string(p.shape.m), std::to_string(p.shape.n), std::to_string(p.shape.k),
               us(p.measured_us), fmt::format("{:.1f}", p.measured_tflops), us(l.model_us(p)),
               fmt::format("{:.1f}", l.model_tflops(p)), diff_pct(l.model_us(p), p.measured_us),
               std::to_string(p.slowest_rank)});
  const bool one_rate = !l.products.empty() && l.products.front().model_tflops <= 0;
  t.notes.push_back(fmt::format(
      "one layer's products in {}: measured {} us, model {} us ({}; compute source {}{}); each timed alone, the "
      "median of {} after {}",
      name(l.dtype), us(l.measured_layer_us()), us(l.model_layer_us()),
      diff_pct(l.model_layer_us(), l.measured_layer_us()), l.model_source,
      one_rate ? ", one rate for every product" : "", kProductIters, kProductWarmup));
  return render(t);
}

}  // namespace

std::string step_text(const StepView& v) {
  std::string s = fmt::format(
      "# fabricbench step: workload {}, dp {} x tp {} x pp {} = {} ranks, backend {}, compute: {}\n",
      v.workload.name, v.schedule.dp, v.schedule.tp, v.schedule.pp, v.schedule.dp * v.schedule.tp * v.schedule.pp,
      v.backend, v.kernel);
  s += modes_text(v.report) + comms_text(v);
  if (v.products) s += products_text(*v.products);
  if (!v.predictions.empty()) s += predictions_text(v);
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
  line.planned_non_gemm_us = v.schedule.non_gemm_us;
  line.planned_optimizer_us = v.schedule.optimizer_us;
  for (const auto& m : r.modes)
    line.modes.push_back({std::string(step::name(m.mode)), m.step.iterations, m.step.min_us, m.step.median_us,
                          m.step.mean_us, m.step.p99_us, m.step.max_us, m.slowest_rank, m.slowest_rank_mean_us});
  line.compute_us = r.parts.products_us;
  line.non_gemm_us = r.parts.non_gemm_us;
  line.optimizer_us = r.parts.optimizer_us;
  line.comm_share = r.comm_share();
  line.exposed_share = r.exposed_share();
  line.efficiency = r.efficiency();
  line.hidden_us = r.hidden_us();
  for (std::size_t i = 0; i < v.schedule.comms.size(); ++i) {
    const auto& c = v.schedule.comms[i];
    line.comms.push_back({c.name, std::string(step::name(c.group)), std::string(fb::name(c.op)), c.bytes, c.calls,
                          c.window, r.comms[i].per_call_us, r.comms[i].per_step_us});
  }
  if (v.products) {
    for (const ProductFigure& p : v.products->products)
      line.products.push_back({p.shape.name, p.shape.m, p.shape.n, p.shape.k, p.measured_us, p.measured_tflops,
                               p.slowest_rank, p.model_tflops});
    line.products_dtype = std::string(name(v.products->dtype));
    line.products_model_source = v.products->model_source;
    line.products_model_tflops = v.products->model_layer_tflops;
  }
  std::vector<RecordLine> lines{std::move(line)};
  for (const auto& p : v.predictions)
    lines.push_back(StepModelLine{p.basis, p.network, p.node, p.compute_us, p.non_gemm_us, p.optimizer_us, p.comm_us,
                                  p.exposed_us, p.step_us, p.comm_share, p.exposed_share, p.efficiency,
                                  p.step_diff_pct});
  return lines;
}

}  // namespace fb::cli
