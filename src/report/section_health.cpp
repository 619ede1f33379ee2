// Fabric health: the error counters that moved while rows were measured
// (record `counters` lines, issue 36), per record: which node, device and
// counter, by how much, during which rows, and whether those rows used the
// device. Left out when no counter moved, as `run` prints nothing then.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <tuple>

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

}  // namespace

Section health(const HtmlInputs& in) {
  std::string body;
  for (const auto& rec : in.records) {
    if (rec.results.counters.empty()) continue;
    const std::string prefix = record_prefix(rec, in);
    body += fmt::format("<h3>{}{}</h3>\n{}\n", html::text(prefix.empty() ? "" : prefix + ": "),
                        html::text(record_identity(rec.results)), table_of(rec.results));
  }
  if (body.empty()) return {};
  const std::string intro =
      "<p class=\"note\">Error counters that moved while rows were measured, read by each node's leader before and "
      "after every row (docs/run.md, \"Fabric health\"). <em>rows</em>: the rows during which it moved; <em>using "
      "it</em>: those whose scope used the device (the network's devices when the row's ranks spanned nodes, the "
      "GPUs when its buffers were in GPU memory). A counter that moved only beside the rows is still that device's "
      "fault; the rows' figures do not carry it.</p>\n";
  return {"health", "Fabric health", wrap("health", "Fabric health", intro + body)};
}

}  // namespace fb::report::section
