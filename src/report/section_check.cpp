// The acceptance verdict: pass or fail at a glance, every rule with its
// measured and expected figures, and the nodes the run found bad. From
// check.json (--check) or the check lines of a `fabricbench check` record.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report {

namespace {

std::string text_or_empty(const nlohmann::ordered_json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// check.json's "bad" (accept/report.cpp writes it): a host is needed, the rest may be null.
std::vector<Blamed> blamed_from_json(const nlohmann::ordered_json& bad) {
  if (!bad.is_array()) throw std::runtime_error("\"bad\" is not a list");
  std::vector<Blamed> out;
  for (const auto& b : bad) {
    if (!b.is_object() || !b.contains("host") || !b["host"].is_string() || b["host"].get<std::string>().empty())
      throw std::runtime_error("an entry of \"bad\" without its \"host\"");
    Blamed x;
    x.host = b["host"].get<std::string>();
    x.device = text_or_empty(b, "device");
    x.peer = text_or_empty(b, "peer");
    x.rule = text_or_empty(b, "rule");
    x.unit = text_or_empty(b, "unit");
    if (b.contains("figure") && b["figure"].is_number()) x.figure = b["figure"].get<double>();
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

CheckDocument read_check_json(const std::string& path, const std::string& what) {
  const auto j = nlohmann::ordered_json::parse(read_input_file(what, path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("verdicts") || !j["verdicts"].is_array())
    throw UsageError(
        fmt::format("{} '{}': not the check.json `fabricbench check` writes (no \"verdicts\" list)", what, path));
  // The exit code is the verdict a script acts on: never assumed.
  if (!j.contains("exit_code") || !j["exit_code"].is_number_integer() || !j.contains("status") ||
      !j["status"].is_string())
    throw UsageError(
        fmt::format("{} '{}': no integer \"exit_code\" and \"status\": a check.json cut short, or not "
                    "`fabricbench check`'s; run the check again",
                    what, path));
  CheckDocument d;
  d.path = path;
  try {
    d.profile = j.value("profile", std::string());
    d.status = j.value("status", std::string());
    d.exit_code = j.value("exit_code", 0);
    d.results = j.value("results", std::string());
    if (j.contains("run_error") && j["run_error"].is_string()) d.run_error = j["run_error"].get<std::string>();
    const auto counts = j.value("counts", nlohmann::ordered_json::object());
    d.pass = counts.value("pass", 0);
    d.fail = counts.value("fail", 0);
    d.skip = counts.value("skip", 0);
    d.error = counts.value("error", 0);
    for (const auto& v : j["verdicts"]) d.verdicts.push_back(check_from_json(v));
    if (j.contains("bad")) d.bad = blamed_from_json(j["bad"]);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{} '{}': {}", what, path, e.what()));
  }
  return d;
}

namespace section {
namespace {

std::string status_of(const std::vector<CheckLine>& lines) {
  bool fail = false, error = false;
  for (const auto& l : lines) {
    fail = fail || l.status == "fail";
    error = error || l.status == "error";
  }
  return error ? "error" : fail ? "fail" : "pass";
}

std::string verdict_table(const std::vector<CheckLine>& lines) {
  std::vector<Row> rows;
  for (const auto& v : lines) {
    rows.push_back({{html::text(v.rule), html::text(v.kind),
                     fmt::format("<span class=\"v-{0}\">{1}</span>", html::attr(v.status), html::text(v.status)),
                     v.measured ? html::text(html::num(*v.measured) + " " + v.unit) : "-", html::text(v.expected_text),
                     v.margin ? html::pct(*v.margin) : "-", html::text(v.reason)},
                    fmt::format(" data-rule=\"{}\" data-status=\"{}\" data-measured=\"{}\"", html::attr(v.rule),
                                html::attr(v.status), v.measured ? html::exact(*v.measured) : "")});
  }
  return table({"rule", "kind", "verdict", "measured", "expected", "margin", "why"}, rows, "verdicts");
}

// Bad nodes as the records say: the pairs summary's, nodes found bad, and
// hosts of ranks that had wrong elements.
std::map<std::string, std::set<std::string>> bad_nodes(const HtmlInputs& in) {
  std::map<std::string, std::set<std::string>> out;  // host -> why
  for (const auto& rec : in.records) {
    const Results& r = rec.results;
    if (r.summary && r.summary->pairs)
      for (const auto& h : r.summary->pairs->bad_nodes) out[h].insert("the pairs run found it bad");
    for (const auto& f : r.findings)
      if (f.kind == "node")
        for (const auto& h : f.hosts)
          out[h].insert(f.detail.empty() ? "low links" : f.detail);
    for (const auto& m : r.measurements)
      for (int rank : m.wrong_ranks) {
        const std::string host = host_of(r, rank);
        out[host.empty() ? fmt::format("rank {}", rank) : host].insert(
            fmt::format("wrong elements in {} (rank {})", m.op, rank));
      }
  }
  return out;
}

}  // namespace

Section verdict(const HtmlInputs& in) {
  std::vector<std::pair<std::string, std::vector<CheckLine>>> sources;  // where from, lines
  std::string status, profile, run_error;
  if (in.check) {
    sources.emplace_back(in.check->path, in.check->verdicts);
    status = in.check->status;
    profile = in.check->profile;
    run_error = in.check->run_error;
  } else {
    for (const auto& rec : in.records)
      if (!rec.results.checks.empty()) sources.emplace_back(rec.path, rec.results.checks);
    if (!sources.empty()) {
      std::vector<CheckLine> all;
      for (const auto& [from, lines] : sources) all.insert(all.end(), lines.begin(), lines.end());
      status = status_of(all);
      for (const auto& rec : in.records)
        if (rec.results.header.profile) profile = rec.results.header.profile->name;
    }
  }
  const auto bad = bad_nodes(in);
  if (sources.empty() && bad.empty()) return {"verdict", "Verdict", ""};
  std::string body;
  if (!sources.empty()) {
    int counts[4] = {0, 0, 0, 0};
    for (const auto& [from, lines] : sources)
      for (const auto& l : lines)
        ++counts[l.status == "pass" ? 0 : l.status == "fail" ? 1 : l.status == "skip" ? 2 : 3];
    body += fmt::format("<p class=\"banner v-{0}\" data-status=\"{0}\">{1}{2}: {3} passed, {4} failed, {5} skipped, "
                        "{6} errors</p>",
                        html::attr(status), html::text(status == "pass" ? "PASS" : status == "fail" ? "FAIL"
                                                                                   : status == "error" ? "ERROR"
                                                                                                       : status),
                        profile.empty() ? "" : " \u2014 profile " + html::text(profile), counts[0], counts[1], counts[2],
                        counts[3]);
    if (!run_error.empty()) body += "<p class=\"warn\">" + html::text(run_error) + "</p>";
    for (const auto& [from, lines] : sources)
      body += "<p class=\"from\">from " + html::text(from) + "</p>" + verdict_table(lines);
  }
  std::string list;
  for (const auto& [host, why] : bad)
    list += fmt::format("<li data-host=\"{}\"><b>{}</b>: {}</li>", html::attr(host), html::text(host),
                        html::text(fmt::format("{}", fmt::join(why, "; "))));
  body += bad.empty() ? "<p>Bad nodes: none found.</p>"
                      : "<h3>Bad nodes</h3><ul class=\"bad-nodes\">" + list + "</ul>";
  return {"verdict", "Verdict", wrap("verdict", "Acceptance verdict", body,
                                     fmt::format("data-status=\"{}\"", html::attr(status.empty() ? "none" : status)))};
}

}  // namespace section
}  // namespace fb::report
