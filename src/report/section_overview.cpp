// What was measured, on which hardware, with which software and build: one
// block per record. Nodes whose inventory is alike are listed once.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricbench/core/environment_audit.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/units.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

using json = nlohmann::ordered_json;

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string gpus_of(const json& line) {
  std::map<std::string, int> models;
  std::string detail;
  for (const auto& g : line.value("gpus", json::array())) {
    std::string m = str(g, "model");
    if (const auto mem = g.find("memory_bytes"); mem != g.end() && mem->is_number())
      m += fmt::format(" {:.0f} GiB", mem->get<double>() / 1073741824.0);
    ++models[m];
    if (detail.empty()) {
      const json pcie = g.value("pcie", json::object());
      const json nv = g.value("nvlink", json::object());
      if (pcie.is_object() && pcie.contains("gen"))
        detail += fmt::format("PCIe Gen{} x{}", str(pcie, "gen"), str(pcie, "width"));
      if (nv.is_object() && nv.value("active", json(0)).is_number() && nv.value("active", 0) > 0)
        detail += fmt::format(", NVLink{} x{}", str(nv, "generation"), str(nv, "active"));
    }
  }
  std::string out;
  for (const auto& [m, n] : models) out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", n, m);
  return out.empty() ? "none found" : out + (detail.empty() ? "" : " (" + detail + ")");
}

std::string nics_of(const json& line) {
  std::string out;
  for (const auto& n : line.value("nics", json::array())) {
    const auto rate = n.find("rate_gbit");
    const std::string r = rate != n.end() && rate->is_number() ? format_line_rate(rate->get<double>() / 8)
                                                               : "rate unknown";
    out += fmt::format("{}{} {} {} ({})", out.empty() ? "" : "; ", str(n, "name"), str(n, "kind"), r, str(n, "state"));
  }
  return out.empty() ? "none found" : out;
}

std::string software_of(const json& line) {
  std::string out;
  const json sw = line.value("software", json::object());
  if (!sw.is_object()) return {};
  for (const auto& [k, v] : sw.items())
    if (k != "unknown" && !v.is_null()) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, str(sw, k.c_str()));
  return out;
}

std::string paths_of(const InventoryLine& l) {
  std::vector<Row> rows;
  for (const auto& p : l.paths)
    rows.push_back({{html::text(p.scope), html::text(p.cls), p.peak_gbps ? html::num(*p.peak_gbps) : "unknown",
                     html::text(p.peak_gbps ? p.basis : p.basis + ": " + p.unknown_reason)},
                    fmt::format(" data-scope=\"{}\" data-class=\"{}\" data-peak-gbps=\"{}\"", html::attr(p.scope),
                                html::attr(p.cls), p.peak_gbps ? html::exact(*p.peak_gbps) : "")});
  return table({"scope", "path", "spec peak (GB/s)", "basis"}, rows, "paths");
}

std::string inventory(const Results& r) {
  // One entry per node (its first rank's line), nodes with the same
  // hardware and software listed together.
  std::map<std::string, std::vector<std::string>> alike;
  std::map<std::string, const InventoryLine*> first;
  std::vector<std::string> order;
  std::set<std::string> hosts_seen;
  for (const auto& l : r.inventory) {
    if (!hosts_seen.insert(l.host + "#" + std::to_string(l.node)).second) continue;
    const json& j = l.line.get();
    std::string key = gpus_of(j) + "|" + nics_of(j) + "|" + software_of(j);
    for (const auto& p : l.paths) key += "|" + p.cls + (p.peak_gbps ? html::exact(*p.peak_gbps) : "?");
    if (!first.count(key)) {
      first[key] = &l;
      order.push_back(key);
    }
    alike[key].push_back(l.host.empty() ? fmt::format("rank {}", l.rank) : l.host);
  }
  std::string out;
  for (const auto& key : order) {
    const InventoryLine& l = *first[key];
    const json& j = l.line.get();
    const auto& hosts = alike[key];
    std::string names;
    for (std::size_t i = 0; i < hosts.size() && i < 8; ++i) names += (i ? ", " : "") + hosts[i];
    if (hosts.size() > 8) names += fmt::format(" and {} more", hosts.size() - 8);
    out += fmt::format("<div class=\"node\"><h4>{} node{}: {}</h4><dl><dt>GPUs</dt><dd>{}</dd><dt>NICs</dt><dd>{}</dd>"
                       "<dt>software</dt><dd>{}</dd></dl>{}{}</div>",
                       hosts.size(), hosts.size() == 1 ? "" : "s", html::text(names), html::text(gpus_of(j)),
                       html::text(nics_of(j)), html::text(software_of(j)), paths_of(l),
                       l.flags.empty() ? "" : "<p class=\"warn\">flags: " + html::text(fmt::format("{}", fmt::join(l.flags, "; "))) + "</p>");
  }
  return out;
}

// What in the ranks' NCCL, UCX and Open MPI settings distorts the figures
// (core/environment_audit.hpp), one row per setting; one line when nothing does.
std::string environment(const Results& r) {
  if (!has_environment(r.inventory)) return {};
  const auto findings = audit_environment(r.inventory);
  if (findings.empty())
    return "<p class=\"note\" data-environment=\"clean\">Environment: no NCCL, UCX or Open MPI setting that distorts "
           "the figures.</p>";
  std::vector<Row> rows;
  for (const auto& f : findings)
    rows.push_back({{html::text(f.setting) + (f.detail.empty() ? "" : "<br>" + html::text(f.detail)),
                     html::text(ranks_text(f.ranks)), html::text(std::string(reason(f.flag))),
                     html::text(std::string(fix(f.flag)))},
                    fmt::format(" class=\"warn\" data-env-flag=\"{}\"", html::attr(std::string(name(f.flag))))});
  return "<h4>Environment</h4>" + table({"setting", "ranks", "why it matters", "fix"}, rows, "environment");
}

// An imported record's devices, as nccl-tests listed them.
std::string imported(const Results& r) {
  const json& o = r.header.options.get();
  if (!o.is_object()) return {};
  std::string out = fmt::format("<p>Imported from {} output{}: {}.</p>", html::text(str(o, "source")),
                                str(o, "nccl_tests_version").empty() ? "" : " (version " + html::text(str(o, "nccl_tests_version")) + ")",
                                html::text(fmt::format("{}", fmt::join(o.value("files", std::vector<std::string>{}), ", "))));
  std::vector<Row> rows;
  for (const auto& t : o.value("tables", json::array())) {
    std::map<std::string, int> devices;
    for (const auto& d : t.value("devices", json::array())) ++devices[str(d, "host") + ": " + str(d, "name")];
    std::string devs;
    for (const auto& [d, n] : devices) devs += fmt::format("{}{} x {}", devs.empty() ? "" : "; ", n, d);
    rows.push_back({{html::text(str(t, "op")), html::text(str(t, "where")), html::text(str(t, "nranks")),
                     html::text(devs.empty() ? "not listed" : devs), html::text(str(t, "iters")),
                     t.value("finished", false) ? "yes" : "<span class=\"bad\">no</span>"},
                    ""});
  }
  out += table({"op", "from", "ranks", "devices", "iterations", "finished"}, rows);
  out += "<p class=\"note\">nccl-tests prints one time per row (the mean over its timed iterations): imported "
         "rows have no spread, and without fabricbench's inventory no spec peak.</p>";
  return out;
}

std::string build_of(const RunHeader& h) {
  if (!h.build) return "not recorded (a record before schema 1.4)";
  const BuildRef& b = *h.build;
  std::string out = fmt::format("fabricbench {} commit {}{}, {} build, {}", b.version, b.git_commit,
                                b.git_dirty ? " (with uncommitted changes)" : "", b.build_type, b.compiler);
  if (!b.mpi_library.empty()) out += ", " + b.mpi_library;
  if (!b.cuda_built.empty()) out += ", CUDA " + b.cuda_built;
  if (!b.nccl_built.empty()) out += ", NCCL " + b.nccl_built;
  return out;
}

std::string record_block(const RecordInput& rec, const HtmlInputs& in) {
  const Results& r = rec.results;
  const RunHeader& h = r.header;
  std::string args;
  for (const auto& a : h.argv) args += (args.empty() ? "" : " ") + a;
  std::string status = r.status;
  if (r.summary && !r.summary->reason.empty()) status += ": " + r.summary->reason;
  if (r.truncated) status += " (" + r.truncated_note + ")";
  std::string hosts;
  for (std::size_t i = 0; i < h.hosts.size(); ++i)
    hosts += fmt::format("{}{} ({} rank{})", i ? ", " : "", h.hosts[i],
                         i < h.ranks_per_node.size() ? h.ranks_per_node[i] : 0,
                         i < h.ranks_per_node.size() && h.ranks_per_node[i] == 1 ? "" : "s");
  const std::vector<std::pair<std::string, std::string>> facts{
      {"file", rec.path},
      {"command", "fabricbench " + args},
      {"started", h.start_time},
      {"run id", h.run_id},
      {"ranks", h.ranks >= 0 ? std::to_string(h.ranks) : "not said"},
      {"nodes", hosts.empty() ? "not said" : hosts},
      {"backend", h.backend ? *h.backend + (h.backend_version ? " " + *h.backend_version : "") : "-"},
      {"MPI", h.mpi_library.empty()
                  ? "-"
                  : h.mpi_library + (h.mpi_thread_level ? " at " + *h.mpi_thread_level : std::string())},
      {"build", build_of(h)},
      {"status", status},
      {"lines", fmt::format("{} measurements, {} skipped, {} pair, {} check", r.measurements.size(), r.skips.size(),
                            r.pairs.size(), r.checks.size())},
  };
  std::string dl = "<dl class=\"facts\">";
  for (const auto& [k, v] : facts) dl += "<dt>" + html::text(k) + "</dt><dd>" + html::text(v) + "</dd>";
  dl += "</dl>";
  const std::string title = in.records.size() > 1 ? rec.label + ": " + record_identity(r) : record_identity(r);
  std::string body = dl;
  if (!r.inventory.empty()) body += "<h4>Hardware (inventory)</h4>" + inventory(r) + environment(r);
  if (h.command == "import") body += imported(r);
  if (r.inventory.empty() && h.command != "import")
    body += "<p class=\"note\">No inventory lines: the hardware and its spec peaks are unknown.</p>";
  for (const auto& s : r.skips)
    body += fmt::format("<p class=\"warn\">skipped {}{} {}: {}</p>", html::text(s.op.empty() ? "scope" : s.op),
                        s.scope.empty() ? "" : "/" + html::text(s.scope),
                        s.bytes ? html::text(format_bytes(s.bytes)) : "", html::text(s.reason));
  return fmt::format("<div class=\"record\" data-record=\"{}\" data-status=\"{}\"><h3>{}</h3>{}</div>",
                     html::attr(rec.label), html::attr(r.status), html::text(title), body);
}

}  // namespace

Section overview(const HtmlInputs& in) {
  std::string body;
  for (const auto& rec : in.records) body += record_block(rec, in);
  return {"runs", "Runs and hardware", wrap("runs", "What was measured, on what", body)};
}

}  // namespace fb::report::section
