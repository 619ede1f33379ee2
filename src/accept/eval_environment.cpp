// The `environment` rule: no rank ran with an NCCL, UCX or Open MPI setting
// that distorts the figures or hides a fault (core/environment_audit.hpp:
// an algorithm, protocol or channel count forced, a transport switched off,
// NICs left out, a slow socket interface, RoCE without a GID index, settings
// that differ between ranks), from the inventory lines' `environment`:
//   - kind: environment
//     allow: [algo_forced]   # optional: flags this profile accepts
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "eval_parts.hpp"
#include "fabricbench/core/environment_audit.hpp"
#include "profile_parts.hpp"

namespace fb::accept {

void parse_environment_rule(const Field& f, Rule& r) {
  const auto v = f.find("allow");
  if (!v) return;
  r.allowed_env_flags = v->list();
  for (const auto& flag : r.allowed_env_flags)
    if (!is_env_flag(flag))
      v->fail(fmt::format("'{}' is no environment flag; allowed: {}", flag, fmt::join(env_flag_names(), ", ")));
}

Verdict eval_environment(const Rule& rule, const Results& run) {
  if (!has_environment(run.inventory))
    return skipped(rule, "no inventory line records its environment (a record before schema 1.9, or no inventory)");
  std::vector<EnvFinding> bad;
  for (auto& f : audit_environment(run.inventory))
    if (std::find(rule.allowed_env_flags.begin(), rule.allowed_env_flags.end(), name(f.flag)) ==
        rule.allowed_env_flags.end())
      bad.push_back(std::move(f));
  Verdict v = start_verdict(rule);
  v.unit = kUnitEnvFlags;
  judge(v, Bound::max, static_cast<double>(bad.size()), 0, "0");
  if (bad.empty()) {
    v.reason = "no rank ran with an NCCL, UCX or Open MPI setting that distorts the figures";
    return v;
  }
  std::map<std::string, int> per_host;
  std::vector<std::string> parts;
  for (const auto& f : bad) {
    parts.push_back(finding_text(f));
    for (const auto& h : f.hosts) ++per_host[h];
  }
  for (const auto& [host, n] : per_host) v.offenders.push_back({host, -1, "", static_cast<double>(n), v.unit});
  v.reason = fmt::format("{} setting{} distort{} the figures or hide a fault: {}", bad.size(),
                         bad.size() == 1 ? "" : "s", bad.size() == 1 ? "s" : "", fmt::join(parts, "; "));
  return v;
}

}  // namespace fb::accept
