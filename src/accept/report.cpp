// The verdict table rank 0 prints and the check.json document.
#include "fabricbench/accept/report.hpp"

#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "eval_parts.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/text_table.hpp"

namespace fb::accept {
namespace {

using json = nlohmann::ordered_json;

std::string status_word(Status s) {
  std::string w(name(s));
  std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return w;
}

}  // namespace

// Rule names and expectations are clipped so one long name cannot push the
// figures off a terminal; the detail column, last, runs as long as it needs.
std::string format_table(const std::vector<Verdict>& verdicts) {
  TextTable t;
  t.head_prefix = "# ";
  t.row_prefix = "  ";
  t.columns = {{.head = "rule", .max_width = 44},
               {.head = "measured", .align = Align::right, .min_width = 16},
               {.head = "expected", .max_width = 52},
               {.head = "margin", .align = Align::right, .min_width = 8},
               {.head = "verdict", .min_width = 7},
               {.head = "detail", .gap = " "}};
  for (const auto& v : verdicts) {
    const std::string measured =
        v.measured ? (is_count(v.unit) ? fmt::format("{:.0f}", *v.measured) : figure(*v.measured, v.unit)) : "-";
    const std::string margin = v.margin ? fmt::format("{:+.1f}%", 100 * *v.margin) : "-";
    t.add_row({v.rule, measured, v.expected_text.empty() ? "-" : v.expected_text, margin, std::string(name(v.status)),
               v.reason});
  }
  return render(t);
}

std::string format_summary(const Report& r) {
  const Counts c = count(r.verdicts);
  std::string text = fmt::format("check {}: {}{} passed, {} failed, {} skipped{} of {} rules", r.profile,
                                 r.run_error.empty() ? "" : "INCOMPLETE, ", c.pass, c.fail, c.skip,
                                 c.error ? fmt::format(", {} in error", c.error) : "", c.total());
  // Every rule the record could not answer, and why: a check that judged
  // little must say so on its one line.
  if (c.not_judged > 0) {
    constexpr int kNamed = 4;  // the table has every reason; the line names the first few
    std::string which;
    int named = 0;
    for (const auto& v : r.verdicts)
      if (!v.judged && named++ < kNamed)
        which += fmt::format("{}'{}' {}", which.empty() ? "" : ", ", v.rule,
                             v.status == Status::skip ? "skipped (optional)" : status_word(v.status));
    if (named > kNamed) which += fmt::format(" and {} more", named - kNamed);
    text += fmt::format("; {} not judged (see each reason above): {}", c.not_judged, which);
  }
  return text;
}

CheckLine check_line(const Verdict& v) {
  CheckLine c;
  c.rule = v.rule;
  c.kind = std::string(name(v.kind));
  c.status = status_word(v.status);
  c.optional = v.optional;
  c.measured = v.measured;
  c.expected = v.expected;
  c.unit = v.unit;
  c.expected_text = v.expected_text;
  c.margin = v.margin;
  c.reason = v.reason;
  c.row = v.row;
  return c;
}

json to_json(const Verdict& v) { return fb::to_json(check_line(v)); }

namespace {

// Every node, rank and link a failed rule blames, one entry each.
json bad_list(const Report& r) {
  json out = json::array();
  for (const auto& v : r.verdicts) {
    if (v.status != Status::fail) continue;
    for (const auto& o : v.offenders)
      out.push_back({{"host", o.host},
                     {"rank", o.rank >= 0 ? json(o.rank) : json(nullptr)},
                     {"peer", o.peer.empty() ? json(nullptr) : json(o.peer)},
                     {"device", o.device.empty() ? json(nullptr) : json(o.device)},
                     {"rule", v.rule},
                     {"figure", o.figure},
                     {"unit", o.unit}});
  }
  return out;
}

}  // namespace

json to_json(const Report& r) {
  const Counts c = count(r.verdicts);
  const int code = r.run_error.empty() ? exit_code(r.verdicts) : r.run_exit_code;
  const char* status = !r.run_error.empty() ? (code == kExitUsage ? "error" : "incomplete")
                       : c.error            ? "error"
                       : c.fail             ? "fail"
                                            : "pass";
  json verdicts = json::array();
  for (const auto& v : r.verdicts) {
    json j = to_json(v);
    j.erase("type");
    verdicts.push_back(std::move(j));
  }
  return {{"profile", r.profile},
          {"profile_path", r.profile_path},
          {"results", r.results_path},
          {"baseline", r.baseline_path.empty() ? json(nullptr) : json(r.baseline_path)},
          {"hostname", r.hostname},
          {"timestamp", r.timestamp},
          {"elapsed_s", r.elapsed_s},
          {"ranks", r.ranks},
          {"strict", r.strict},
          {"status", status},
          {"exit_code", code},
          {"run_error", r.run_error.empty() ? json(nullptr) : json(r.run_error)},
          {"counts", {{"pass", c.pass}, {"fail", c.fail}, {"skip", c.skip}, {"error", c.error}}},
          {"not_judged", c.not_judged},
          {"bad", bad_list(r)},
          {"verdicts", verdicts}};
}

std::string check_json_text(const Report& report) {
  return to_json(report).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace fb::accept
