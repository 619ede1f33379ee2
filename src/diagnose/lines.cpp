// Figures and verdicts -> `diagnosis` lines and the table.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fabricbench/core/text_table.hpp"
#include "fabricbench/diagnose/report.hpp"

namespace fb::diagnose {
namespace {

using Unknown = std::vector<std::pair<std::string, std::string>>;

std::optional<double> keep(const char* key, const Fact<double>& f, Unknown& unknown) {
  if (f) return *f;
  unknown.emplace_back(key, f.why());
  return std::nullopt;
}

std::vector<std::string> names(const std::vector<Verdict>& vs) {
  std::vector<std::string> out;
  for (const Verdict v : vs) out.emplace_back(name(v));
  return out;
}

DiagnosisLine start(const NodeSamples& node, const Diagnosis& d, const char* level) {
  DiagnosisLine l;
  l.level = level;
  l.node = node.node;
  l.host = node.host;
  l.verdict = std::string(name(d.verdict));
  l.also = names(d.also);
  l.reason = d.reason();
  l.window_s = node.window_s;
  return l;
}

DiagnosisLine gpu_line(const NodeSamples& node, const GpuSeries& s, const GpuFigures& g, const Diagnosis& d) {
  DiagnosisLine l = start(node, d, "gpu");
  l.gpu = s.info.index;
  l.gpu_model = s.info.model.value_or("unknown");
  l.bus_id = s.info.bus_id.value_or("unknown");
  l.samples = g.samples;
  DiagnosisGpuFigures f;
  auto& u = l.unknown;
  f.sm_util_pct = keep("sm_util_pct", g.sm_util_pct, u);
  f.mem_util_pct = keep("mem_util_pct", g.mem_util_pct, u);
  f.memory_used_pct = keep("memory_used_pct", g.memory_used_pct, u);
  f.pcie_tx_gbps = keep("pcie_tx_gbps", g.pcie_tx_gbps, u);
  f.pcie_rx_gbps = keep("pcie_rx_gbps", g.pcie_rx_gbps, u);
  f.nvlink_tx_gbps = keep("nvlink_tx_gbps", g.nvlink_tx_gbps, u);
  f.nvlink_rx_gbps = keep("nvlink_rx_gbps", g.nvlink_rx_gbps, u);
  f.nvlink_busy_pct = keep("nvlink_busy_pct", g.nvlink_busy_pct, u);
  f.sm_clock_pct = keep("sm_clock_pct", g.sm_clock_pct, u);
  f.throttled_pct = keep("throttled_pct", g.throttled_pct, u);
  f.power_w = keep("power_w", g.power_w, u);
  f.power_pct = keep("power_pct", g.power_pct, u);
  f.temperature_max_c = keep("temperature_max_c", g.temperature_max_c, u);
  f.throttle_reasons = g.throttle_reasons;
  l.gpu_figures = std::move(f);
  return l;
}

DiagnosisLine node_line(const NodeSamples& node, const NodeFigures& n, const Diagnosis& d) {
  DiagnosisLine l = start(node, d, "node");
  l.samples = node.gpus.empty() ? 0 : node.gpus.front().samples.size();
  DiagnosisNodeFigures f;
  auto& u = l.unknown;
  f.gpus = node.gpus.size();
  if (node.gpus.empty()) u.emplace_back("gpus", node.gpu_reason.empty() ? "no GPU sampled" : node.gpu_reason);
  f.nic = n.nic;
  f.nic_tx_gbps = keep("nic_tx_gbps", n.nic_tx_gbps, u);
  f.nic_rx_gbps = keep("nic_rx_gbps", n.nic_rx_gbps, u);
  f.nic_busy_pct = keep("nic_busy_pct", n.nic_busy_pct, u);
  f.process_cpu_cores = keep("process_cpu_cores", n.process_cpu_cores, u);
  if (n.process_alive)
    f.process_alive = *n.process_alive;
  else
    u.emplace_back("process_alive", n.process_alive.why());
  f.iterations = n.iterations;
  f.iter_unit = n.iter_unit;
  f.iter_median = keep("iter_median", n.iter_median, u);
  f.iter_spread_pct = keep("iter_spread_pct", n.iter_spread_pct, u);
  l.node_figures = std::move(f);
  return l;
}

std::string cell(const std::optional<double>& v, const char* spec = "{:.0f}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : "?";
}

}  // namespace

std::vector<DiagnosisLine> diagnose(const NodeSamples& node, const Thresholds& t) {
  const NodeFigures n = node_figures(node, t);
  std::vector<DiagnosisLine> out;
  std::vector<std::pair<int, Diagnosis>> gpus;
  for (const auto& s : node.gpus) {
    const GpuFigures g = gpu_figures(s, t);
    const Diagnosis d = diagnose_gpu(g, n, t);
    out.push_back(gpu_line(node, s, g, d));
    gpus.emplace_back(s.info.index, d);
  }
  out.push_back(node_line(node, n, diagnose_node(gpus, n, node.gpu_reason, t)));
  return out;
}

namespace {

// Fixed widths (a table of a few lines still looks like the usual one), one
// space apart; host and GPU model cut bare, as nvidia-smi does.
std::vector<TextColumn> columns() {
  const auto name = [](const char* head, std::size_t width, std::size_t max = 0) {
    return TextColumn{.head = head, .min_width = width, .max_width = max, .clip_mark = "", .gap = " "};
  };
  const auto figure = [](const char* head, std::size_t width) {
    return TextColumn{.head = head, .align = Align::right, .min_width = width, .gap = " "};
  };
  return {name("node", 5),       name("host", 16, 16), name("gpu", 4),     name("model", 22, 22),
          name("verdict", 20),   figure("sm%", 5),     figure("mem%", 5),  figure("used%", 6),
          figure("pcie_rx", 8),  figure("nvlink%", 8), figure("clock%", 7), figure("thr%", 6),
          figure("power%", 6),   figure("temp", 6)};
}

std::vector<std::string> gpu_cells(const DiagnosisLine& l, const DiagnosisGpuFigures& f) {
  return {std::to_string(l.node),     l.host,
          std::to_string(l.gpu),      l.gpu_model,
          l.verdict,                  cell(f.sm_util_pct),
          cell(f.mem_util_pct),       cell(f.memory_used_pct),
          cell(f.pcie_rx_gbps, "{:.2f}"), cell(f.nvlink_busy_pct),
          cell(f.sm_clock_pct),       cell(f.throttled_pct),
          cell(f.power_pct),          cell(f.temperature_max_c)};
}

// The node's row has no GPU figures: its NIC, iterations and CPU use follow
// the verdict as words.
std::string node_tail(const DiagnosisNodeFigures& f) {
  std::string extra;
  if (f.nic_busy_pct) extra += fmt::format(" NIC {} {:.0f}% of its peak;", f.nic, *f.nic_busy_pct);
  if (f.iter_median)
    extra += fmt::format(" {} iterations, median {:.4g} {}{};", f.iterations, *f.iter_median, f.iter_unit,
                         f.iter_spread_pct ? fmt::format(", spread {:.0f}%", *f.iter_spread_pct) : "");
  if (f.process_cpu_cores) extra += fmt::format(" job processes {:.2f} CPU cores;", *f.process_cpu_cores);
  return extra;
}

}  // namespace

std::string format_table(const std::vector<DiagnosisLine>& lines, const Thresholds& t) {
  TextTable table;
  table.columns = columns();
  table.note_prefix = "";
  for (const auto& l : lines) {
    if (l.gpu_figures)
      table.add_row(gpu_cells(l, *l.gpu_figures));
    else if (l.node_figures)
      table.add_row({std::to_string(l.node), l.host, "all", "(node)", l.verdict}, node_tail(*l.node_figures));
  }
  // Under the table, a blank line, each line's verdict in words, a blank line, the thresholds.
  table.notes.emplace_back();
  for (const auto& l : lines)
    table.notes.push_back(fmt::format("{} {}{}: {}: {}", l.host, l.level == "gpu" ? "GPU " : "node",
                                      l.level == "gpu" ? std::to_string(l.gpu) : "", words_of(l.verdict), l.reason));
  table.notes.emplace_back();
  table.notes.push_back(describe(t));
  return render(table);
}

}  // namespace fb::diagnose
