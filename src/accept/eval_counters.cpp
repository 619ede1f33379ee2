// The `counters` rule: an error counter read around every measured row
// (record `counters` lines, since schema 1.11) stays at or below `max` on
// every node's port, interface or PCI function, summed over the run:
//   - kind: counters
//     counter: symbol_error       # topo/counters.hpp's names, or tcp_retransmits_per_gb
//     max: 0
//     informational: true         # optional: reported, never failed
// tcp_retransmits_per_gb divides a node's TCP retransmissions (node-wide:
// ssh and storage traffic retransmit too) by the GB the run's rows carried
// on each rank's link (bytes x the op's busbw factor x iterations).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "eval_parts.hpp"

namespace fb::accept {

namespace {

// One node's device, over the run.
struct DeviceCount {
  std::string host;
  double count = 0;      // the known deltas, summed
  std::size_t rows = 0;  // rows it moved in
  std::size_t used = 0;  // those whose scope used the device
  std::size_t unknown = 0;
  std::string why;  // the first unknown row's reason
};

// GB each rank's link carried over the run's rows (busbw's bytes).
double bus_gb(const Results& run) {
  double gb = 0;
  for (const auto& m : run.measurements) {
    const double factor = m.algbw_gbps > 0 ? m.busbw_gbps / m.algbw_gbps : 1.0;
    gb += static_cast<double>(m.bytes) * factor * static_cast<double>(m.time.iterations) / 1e9;
  }
  return gb;
}

std::map<std::pair<int, std::string>, DeviceCount> count_devices(const Results& run, const std::string& counter) {
  std::map<std::pair<int, std::string>, DeviceCount> out;
  for (const auto& c : run.counters) {
    if (c.counter != counter) continue;
    DeviceCount& d = out[{c.node, c.device}];
    d.host = c.host;
    ++d.rows;
    if (c.exercised) ++d.used;
    if (c.delta)
      d.count += static_cast<double>(*c.delta);
    else if (d.unknown++ == 0)
      d.why = c.unknown_reason;
  }
  return out;
}

}  // namespace

Verdict eval_counters(const Rule& rule, const Results& run) {
  if (const auto minor = schema_minor_of(run.header.schema_version); minor && *minor < 11)
    return skipped(rule, fmt::format("the record is schema {}: error counters are read around rows since 1.11",
                                     run.header.schema_version));
  if (run.header.counters == "off")
    return skipped(rule, "the run read no error counters (--counters off): run the check without --counters off");
  const bool per_gb = rule.counter == kTcpRetransmitsPerGb;
  const double gb = per_gb ? bus_gb(run) : 1.0;
  if (per_gb && gb <= 0) return skipped(rule, "no measured row carried any bytes: no retransmissions per GB");
  Verdict v = start_verdict(rule);
  v.unit = per_gb ? "retransmits/GB" : rule.counter;
  const auto devices = count_devices(run, per_gb ? "tcp_retrans_segs" : rule.counter);
  double worst = 0;
  std::vector<std::string> over, unknown;
  for (const auto& [key, d] : devices) {
    const double figure_of = d.count / gb;
    worst = std::max(worst, figure_of);
    const std::string where = fmt::format("node {} ({}) {}", key.first, d.host, key.second);
    if (d.unknown) unknown.push_back(fmt::format("{}: {} rows unknown ({})", where, d.unknown, d.why));
    if (figure_of > rule.counter_max) {
      over.push_back(
          fmt::format("{}: {} over {} rows ({} using it)", where, figure(figure_of, v.unit), d.rows, d.used));
      v.offenders.push_back({d.host, -1, "", figure_of, v.unit, key.second});
    }
  }
  const std::string where = per_gb ? fmt::format(" over {:.3f} GB", gb) : "";
  if (rule.informational) {
    v.status = Status::pass;
    v.measured = worst;
    v.expected_text = "reported only";
    v.offenders.clear();
    v.reason = devices.empty()
                   ? "no node's counter moved during a row"
                   : fmt::format("informational{}: {}", where, fmt::join(over.empty() ? unknown : over, "; "));
    return v;
  }
  judge(v, Bound::max, worst, rule.counter_max, fmt::format("{}", rule.counter_max));
  if (!over.empty()) {
    v.reason = fmt::format("{} of the nodes' devices counted more than {}{}: {}", over.size(), rule.counter_max, where,
                           fmt::join(over, "; "));
    return v;
  }
  // A saturated or reset counter hides what happened during its rows.
  if (!unknown.empty())
    return skipped(rule, fmt::format("the counter's change is unknown in some rows: {}", fmt::join(unknown, "; ")));
  v.reason = devices.empty() ? "no node's counter moved during a measured row"
                             : fmt::format("every node's device within {}{}", rule.counter_max, where);
  return v;
}

}  // namespace fb::accept
