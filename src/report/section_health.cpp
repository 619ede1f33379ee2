// Fabric health, per record: the error counters that moved while rows were
// measured (record `counters` lines, issue 36): which node, device and
// counter, by how much, during which rows, and whether those rows used the
// device; and the rows and links whose iteration times fell into two modes
// (core/modes.hpp), with both modes and their shares, as `run` and `pairs`
// warn. Left out when neither happened, as `run` prints nothing then.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <tuple>

#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/sizes.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

// One node's device counter over a record.
struct DeviceMoves {
  std::uint64_t delta = 0;  // over the rows where it is known
  std::size_t rows = 0;
  std::size_t used = 0;          // rows whose scope used the device
  std::size_t unknown = 0;       // rows whose delta is unknown
  std::string why;               // the first unknown row's reason
  std::set<std::string> during;  // "all_reduce inter", "pairs rail", ...
};

using DeviceKey =
    std::tuple<int, std::string, std::string, std::string, std::string>;  // node, host, device, kind, counter

std::map<DeviceKey, DeviceMoves> moves_of(const Results& r) {
  std::map<DeviceKey, DeviceMoves> out;
  for (const auto& c : r.counters) {
    DeviceMoves& m = out[{c.node, c.host, c.device, c.device_kind, c.counter}];
    ++m.rows;
    if (c.exercised) ++m.used;
    m.during.insert(c.op + " " + c.scope);
    if (c.delta)
      m.delta += *c.delta;
    else if (m.unknown++ == 0)
      m.why = c.unknown_reason;
  }
  return out;
}

std::string table_of(const Results& r) {
  std::vector<Row> rows;
  for (const auto& [key, m] : moves_of(r)) {
    const auto& [node, host, device, kind, counter] = key;
    std::string note;
    if (m.unknown) note = html::text(fmt::format("{} rows unknown: {}", m.unknown, m.why));
    if (m.used == 0)
      note += std::string(note.empty() ? "" : "; ") +
              "<span class=\"warn\">no row that used it was measured while it moved</span>";
    rows.push_back(
        {{html::text(fmt::format("{}", node)), html::text(host), html::text(device), html::text(kind),
          html::text(counter), html::text(fmt::format("{}", m.delta)), html::text(fmt::format("{}", m.rows)),
          html::text(fmt::format("{}", m.used)), html::text(fmt::format("{}", fmt::join(m.during, ", "))), note},
         fmt::format(" data-device=\"{}\" data-counter=\"{}\"", html::attr(device), html::attr(counter))});
  }
  return table({"node", "host", "device", "kind", "counter", "delta", "rows", "using it", "during", "note"}, rows,
               "num");
}

// Rows and node pairs whose times fell into two modes: what the median alone
// would average away.
std::string modes_of(const Results& r) {
  std::vector<Row> rows;
  for (const auto& m : r.measurements) {
    if (!m.modes) continue;
    const std::string what =
        fmt::format("{}/{} {} {}{}", m.op, m.scope, m.backend, format_bytes(m.bytes), m.in_place ? " in-place" : "");
    rows.push_back({{html::text(what), html::text(modes_text(*m.modes))},
                    fmt::format(" data-op=\"{}\" data-bytes=\"{}\"", html::attr(m.op), m.bytes)});
  }
  for (const auto& p : r.pairs) {
    if (!p.modes) continue;
    const std::string what =
        fmt::format("link {} - {} {} ({})", p.host_a, p.host_b, p.modes->op, format_bytes(p.bytes));
    rows.push_back({{html::text(what), html::text(modes_text(*p.modes))},
                    fmt::format(" data-link=\"{}-{}\"", p.node_a, p.node_b)});
  }
  if (rows.empty()) return {};
  return "<h4>Two modes</h4>\n" + table({"row or link", "iteration times"}, rows, "modes");
}

}  // namespace

Section health(const HtmlInputs& in) {
  std::string body;
  for (const auto& rec : in.records) {
    const std::string counters = rec.results.counters.empty() ? "" : table_of(rec.results);
    const std::string modes = modes_of(rec.results);
    if (counters.empty() && modes.empty()) continue;
    const std::string prefix = record_prefix(rec, in);
    body += fmt::format("<h3>{}{}</h3>\n{}{}\n", html::text(prefix.empty() ? "" : prefix + ": "),
                        html::text(record_identity(rec.results)), counters, modes);
  }
  if (body.empty()) return {};
  const std::string intro =
      "<p class=\"note\">Error counters that moved while rows were measured, read by each node's leader before and "
      "after every row (docs/run.md, \"Fabric health\"). <em>rows</em>: the rows during which it moved; <em>using "
      "it</em>: those whose scope used the device (the network's devices when the row's ranks spanned nodes, the "
      "GPUs when its buffers were in GPU memory). A counter that moved only beside the rows is still that device's "
      "fault; the rows' figures do not carry it. <em>Two modes</em>: rows and links whose iteration times fell into "
      "two separate groups (a flapping link, a path that alternates), each with its share; their median is a "
      "figure no iteration had (docs/run.md, \"Bimodal rows\").</p>\n";
  return {"health", "Fabric health", wrap("health", "Fabric health", intro + body)};
}

}  // namespace fb::report::section
