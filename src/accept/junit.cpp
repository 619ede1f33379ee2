// JUnit XML, the shape CI systems (Jenkins, GitLab, GitHub actions) read:
// <testsuites> / <testsuite> / <testcase>, with <failure>, <skipped> and
// <error> children and counts on both suite elements.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "eval_parts.hpp"
#include "fabricbench/accept/report.hpp"

namespace fb::accept {
namespace {

// Decodes one UTF-8 sequence at `i`; returns the code point or -1 when the
// bytes are not valid UTF-8 (then `len` is 1 so the byte is skipped).
long decode_utf8(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  len = 1;
  if (b0 < 0x80) return b0;
  const std::size_t n = b0 >= 0xF0 && b0 < 0xF5 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return -1;
  long cp = b0 & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (b & 0x3F);
  }
  const long min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_length[n]) return -1;  // overlong
  len = n;
  return cp;
}

// Characters XML 1.0 allows.
bool xml_char(long cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

std::string attr(std::string_view name, std::string_view value) {
  return fmt::format(" {}=\"{}\"", name, xml_escape(value));
}

std::string counts_attrs(int tests, const Counts& c, double time_s) {
  return fmt::format(" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"", tests, c.fail,
                     c.error, c.skip, time_s);
}

std::string figures(const Verdict& v) {
  std::string out = fmt::format("rule: {}\nkind: {}\n", v.rule, name(v.kind));
  if (v.measured) out += fmt::format("measured: {}\n", figure(*v.measured, v.unit));
  if (!v.expected_text.empty()) out += fmt::format("expected: {}\n", v.expected_text);
  if (v.margin) out += fmt::format("margin: {:+.1f}%\n", 100 * *v.margin);
  if (v.row)
    out += fmt::format("row: {}\n", to_json(*v.row).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!v.reason.empty()) out += fmt::format("detail: {}\n", v.reason);
  return out;
}

std::string testcase(const Verdict& v, const std::string& classname) {
  std::string out = fmt::format("    <testcase{}{} time=\"0\">\n", attr("name", v.rule), attr("classname", classname));
  const std::string short_text = v.measured ? fmt::format("{}: measured {}, expected {}", name(v.status),
                                                          figure(*v.measured, v.unit), v.expected_text)
                                            : fmt::format("{}: {}", name(v.status), v.reason);
  switch (v.status) {
    case Status::fail:
      out += fmt::format("      <failure{}{}>{}</failure>\n", attr("message", short_text), attr("type", name(v.kind)),
                         xml_escape(figures(v)));
      break;
    case Status::skip:
      out += fmt::format("      <skipped{}/>\n", attr("message", v.reason));
      break;
    case Status::error:
      out += fmt::format("      <error{}{}>{}</error>\n", attr("message", v.reason), attr("type", name(v.kind)),
                         xml_escape(figures(v)));
      break;
    case Status::pass:
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(figures(v)));
      break;
  }
  return out + "    </testcase>\n";
}

// One testcase per node of the job, so a dashboard can drain exactly the
// nodes a failed rule blames. A node no failed rule blames passes; in a run
// that did not finish every node is unjudged (an error), as every rule is.
struct NodeCase {
  std::string host;
  Status status = Status::pass;
  std::vector<std::string> blamed_by;  // the rules, once each
  std::string detail;                  // one line per offender entry: rule, figure, rank or peer
};

std::string blame_line(const Verdict& v, const Offender& o) {
  std::string who = o.rank >= 0 ? fmt::format(", rank {}", o.rank) : "";
  if (!o.peer.empty()) who += fmt::format(", link to {}", o.peer);
  if (!o.device.empty()) who += fmt::format(", {}", o.device);
  return fmt::format("rule '{}' ({}): {}{}\n", v.rule, name(v.kind), figure(o.figure, o.unit), who);
}

// The job's nodes in order, then any host a rule blames that the record's
// header did not list (a hand-made record).
std::vector<NodeCase> node_cases(const Report& r) {
  std::vector<NodeCase> nodes;
  auto find = [&nodes](const std::string& host) {
    return std::find_if(nodes.begin(), nodes.end(), [&host](const NodeCase& n) { return n.host == host; });
  };
  for (const auto& h : r.hosts)
    if (find(h) == nodes.end()) nodes.push_back(NodeCase{h, Status::pass, {}, {}});
  for (const auto& v : r.verdicts) {
    if (v.status != Status::fail) continue;
    for (const auto& o : v.offenders) {
      if (o.host.empty()) continue;
      auto it = find(o.host);
      if (it == nodes.end()) it = nodes.insert(nodes.end(), NodeCase{o.host, Status::pass, {}, {}});
      it->status = Status::fail;
      if (std::find(it->blamed_by.begin(), it->blamed_by.end(), v.rule) == it->blamed_by.end())
        it->blamed_by.push_back(v.rule);
      it->detail += blame_line(v, o);
    }
  }
  if (!r.run_error.empty())
    for (auto& n : nodes) n.status = Status::error;
  return nodes;
}

std::string node_testcase(const NodeCase& n, const std::string& classname, const std::string& run_error) {
  std::string out = fmt::format("    <testcase{}{} time=\"0\">\n", attr("name", n.host), attr("classname", classname));
  std::string rules;
  for (const auto& rule : n.blamed_by) rules += fmt::format("{}'{}'", rules.empty() ? "" : ", ", rule);
  switch (n.status) {
    case Status::fail:
      out += fmt::format("      <failure{}{}>{}</failure>\n", attr("message", "FAIL: blamed by " + rules),
                         attr("type", "node"), xml_escape(n.detail));
      break;
    case Status::error:
      out += fmt::format("      <error{}{}>{}</error>\n", attr("message", "not judged: " + run_error),
                         attr("type", "node"),
                         xml_escape(n.detail.empty() ? "" : "blamed on the part that ran:\n" + n.detail));
      break;
    case Status::pass:
    case Status::skip:  // never made: a node is judged by the rules that ran, or not at all
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape("no failed rule blames this node"));
      break;
  }
  return out + "    </testcase>\n";
}

Counts with_nodes(Counts c, const std::vector<NodeCase>& nodes) {
  for (const auto& n : nodes) {
    c.fail += n.status == Status::fail;
    c.error += n.status == Status::error;
    c.pass += n.status == Status::pass;
  }
  return c;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = 1;
    const long cp = decode_utf8(text, i, len);
    if (cp < 0 || !xml_char(cp)) {
      out += "\xEF\xBF\xBD";  // U+FFFD: the character cannot be carried
    } else if (cp == '&') {
      out += "&amp;";
    } else if (cp == '<') {
      out += "&lt;";
    } else if (cp == '>') {
      out += "&gt;";
    } else if (cp == '"') {
      out += "&quot;";
    } else if (cp == '\'') {
      out += "&apos;";
    } else if (cp == '\n' || cp == '\r' || cp == '\t') {
      out += fmt::format("&#{};", cp);  // kept through attribute-value normalisation
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string to_junit_xml(const Report& r) {
  const std::string classname = "fabricbench.check." + r.profile;
  std::vector<Verdict> cases = r.verdicts;
  if (!r.run_error.empty()) {
    // A run that did not finish judges nothing, but a dashboard still sees
    // every rule (as an error, with what was measured of it) and the run's
    // own testcase saying why: the suite keeps its shape run after run.
    for (auto& v : cases) {
      if (v.status != Status::error)
        v.reason = fmt::format("not judged ({} on the part that ran{}): {}", name(v.status),
                               v.reason.empty() ? "" : ": " + v.reason, r.run_error);
      v.status = Status::error;
    }
    Verdict run;
    run.rule = "run";
    run.status = Status::error;
    run.reason = r.run_error;
    cases.insert(cases.begin(), run);
  }
  const std::vector<NodeCase> nodes = node_cases(r);
  const Counts c = with_nodes(count(cases), nodes);
  const int tests = c.total();
  std::string timestamp = r.timestamp;
  if (!timestamp.empty() && timestamp.back() == 'Z') timestamp.pop_back();  // the JUnit schema has no zone
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites{}{}>\n", attr("name", "fabricbench check"), counts_attrs(tests, c, r.elapsed_s));
  out += fmt::format("  <testsuite{}{}{}{}>\n", attr("name", r.profile), counts_attrs(tests, c, r.elapsed_s),
                     attr("timestamp", timestamp), attr("hostname", r.hostname));
  out += "    <properties>\n";
  for (const auto& [k, v] : {std::pair<const char*, std::string>{"profile", r.profile_path},
                             {"results", r.results_path},
                             {"baseline", r.baseline_path},
                             {"ranks", std::to_string(r.ranks)},
                             {"strict", r.strict ? "true" : "false"}})
    out += fmt::format("      <property{}{}/>\n", attr("name", k), attr("value", v));
  out += "    </properties>\n";
  for (const auto& v : cases) out += testcase(v, classname);
  for (const auto& n : nodes) out += node_testcase(n, classname + ".node", r.run_error);
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace fb::accept
