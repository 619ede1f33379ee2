// What a `fabricbench check` decided, for scripts that act on it and read
// check.json through the binary instead of matching its text:
//   report verdict CHECK.json  one line, "STATUS EXIT_CODE" ("fail 1"), for
//                              the launch scripts (scripts/acceptance-mpirun.sh,
//                              scripts/slurm/acceptance.sbatch);
//   report blamed CHECK.json   one line per node a failed rule blames, "HOST<TAB>WHY",
//                              for scripts that drain them (scripts/slurm/drain-blamed.sh).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/report/html.hpp"
#include "report_subcommands.hpp"

namespace fb::cli {

ReportSubcommand add_report_verdict(CLI::App& report) {
  auto path = std::make_shared<std::string>();
  auto* app = report.add_subcommand(
      "verdict",
      "the verdict a check.json holds, as one line \"STATUS EXIT_CODE\" (pass 0, fail 1, error 3, ...): for "
      "scripts that act on a `fabricbench check` they did not run themselves");
  app->add_option("check", *path, "check.json of `fabricbench check`")->required();
  return {app, [path](int, char**) {
            const auto doc = report::read_check_json(*path, "report verdict");
            std::printf("%s %d\n", doc.status.c_str(), doc.exit_code);
            return int{kExitOk};
          }};
}

namespace {

// What one blame says, short enough for a Slurm drain reason; a blame
// without a figure (a run that did not finish) is its text alone.
std::string blame_text(const report::Blamed& b) {
  if (b.figure == 0 && b.unit.empty()) return b.rule;
  std::string where = b.device.empty() ? "" : b.device + " ";
  if (!b.peer.empty()) where += "to " + b.peer + " ";
  return fmt::format("{} ({}{:.4g} {})", b.rule, where, b.figure, b.unit);
}

// With --or-host: what a check that ran on that node alone blames on it
// beside "bad": rules that failed on a measured figure without naming a
// node, and a run that did not finish. A rule that failed because the
// record could not answer it (nothing measured) blames the profile, not the node.
std::vector<report::Blamed> unplaced_failures(const report::CheckDocument& doc, const std::string& host) {
  std::vector<report::Blamed> out;
  if (doc.status == "incomplete") out.push_back({host, "", "", "the run did not finish: " + doc.run_error, 0, ""});
  for (const auto& v : doc.verdicts) {
    if (v.status != "fail" || !v.measured) continue;
    const bool named = std::any_of(doc.bad.begin(), doc.bad.end(), [&](const auto& b) { return b.rule == v.rule; });
    if (!named) out.push_back({host, "", "", v.rule, *v.measured, v.unit});
  }
  return out;
}

int print_blamed(const std::string& path, const std::string& or_host) {
  const auto doc = report::read_check_json(path, "report blamed");
  std::vector<report::Blamed> blamed = doc.bad;
  if (!or_host.empty())
    for (auto& b : unplaced_failures(doc, or_host)) blamed.push_back(std::move(b));
  // One line per host in the order first blamed; a rule that blamed the same
  // device many times (a wrong element in every row) is said once, counted.
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<std::pair<report::Blamed, int>>> of_host;
  for (const auto& b : blamed) {
    auto [it, fresh] = of_host.try_emplace(b.host);
    if (fresh) hosts.push_back(b.host);
    auto same = std::find_if(it->second.begin(), it->second.end(), [&](const auto& seen) {
      return seen.first.rule == b.rule && seen.first.device == b.device && seen.first.peer == b.peer;
    });
    if (same == it->second.end())
      it->second.emplace_back(b, 1);
    else
      ++same->second;
  }
  for (const auto& h : hosts) {
    std::vector<std::string> parts;
    for (const auto& [b, times] : of_host[h]) {
      std::string text = blame_text(b);
      if (times > 1) text += fmt::format(" x{}", times);
      parts.push_back(std::move(text));
    }
    std::printf("%s\t%s\n", h.c_str(), fmt::format("{}", fmt::join(parts, "; ")).c_str());
  }
  return int{kExitOk};
}

}  // namespace

ReportSubcommand add_report_blamed(CLI::App& report) {
  auto path = std::make_shared<std::string>();
  auto* app = report.add_subcommand(
      "blamed",
      "the nodes a check.json blames (its \"bad\"), one line each: HOST, a tab, the failed rules that blame it "
      "with the device and figure; nothing when none is blamed (for scripts that drain nodes)");
  app->add_option("check", *path, "check.json of `fabricbench check`")->required();
  auto or_host = std::make_shared<std::string>();
  app->add_option("--or-host", *or_host,
                  "the check ran on this node alone: a rule that failed on a measured figure without naming a node, "
                  "and a run that did not finish, blame it too (scripts/slurm/health-check.sh)");
  return {app, [path, or_host](int, char**) { return print_blamed(*path, *or_host); }};
}

}  // namespace fb::cli
