// The verdict table rank 0 prints and the check.json document.
#include "fabricbench/accept/report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "eval_parts.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb::accept {
namespace {

using json = nlohmann::ordered_json;

std::string status_word(Status s) {
  std::string w(name(s));
  std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return w;
}

std::string clip(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

}  // namespace

std::string format_table(const std::vector<Verdict>& verdicts) {
  constexpr std::size_t kMaxRule = 44;
  constexpr std::size_t kMaxExpected = 52;
  std::size_t rule_w = 4;
  std::size_t expected_w = 8;
  for (const auto& v : verdicts) {
    rule_w = std::max(rule_w, std::min(v.rule.size(), kMaxRule));
    expected_w = std::max(expected_w, std::min(v.expected_text.size(), kMaxExpected));
  }
  std::string out = fmt::format("# {:<{}}  {:>16}  {:<{}}  {:>8}  {:<7} {}\n", "rule", rule_w, "measured", "expected",
                                expected_w, "margin", "verdict", "detail");
  for (const auto& v : verdicts) {
    const std::string measured =
        v.measured ? (is_count(v.unit) ? fmt::format("{:.0f}", *v.measured) : figure(*v.measured, v.unit)) : "-";
    const std::string margin = v.margin ? fmt::format("{:+.1f}%", 100 * *v.margin) : "-";
    out += fmt::format("  {:<{}}  {:>16}  {:<{}}  {:>8}  {:<7} {}\n", clip(v.rule, kMaxRule), rule_w, measured,
                       clip(v.expected_text.empty() ? "-" : v.expected_text, kMaxExpected), expected_w, margin,
                       name(v.status), v.reason);
  }
  return out;
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

json to_json(const Report& r) {
  const Counts c = count(r.verdicts);
  const int code = r.run_error.empty() ? exit_code(r.verdicts) : kExitRunError;
  const char* status = !r.run_error.empty() ? "incomplete" : c.error ? "error" : c.fail ? "fail" : "pass";
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
          {"verdicts", verdicts}};
}

}  // namespace fb::accept
