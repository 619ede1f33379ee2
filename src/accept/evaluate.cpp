// Dispatch over rule kinds, the verdict helpers every evaluator shares, and
// the counts and exit code of a set of verdicts.
#include "fabricbench/accept/evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "eval_parts.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb::accept {

std::string_view name(Status status) {
  switch (status) {
    case Status::pass:
      return "PASS";
    case Status::fail:
      return "FAIL";
    case Status::skip:
      return "SKIP";
    case Status::error:
      return "ERROR";
  }
  return "?";
}

bool is_count(const std::string& unit) {
  return unit == kUnitWrong || unit == kUnitFields || unit == kUnitBreaks || unit == kUnitModels ||
         unit == kUnitSocketRows || unit == kUnitEnvFlags || unit == kUnitBimodalRows;
}

Verdict start_verdict(const Rule& rule) {
  Verdict v;
  v.rule = rule.name;
  v.kind = rule.kind;
  v.optional = rule.optional;
  return v;
}

Verdict skipped(const Rule& rule, std::string reason) {
  Verdict v = start_verdict(rule);
  v.status = Status::skip;
  v.reason = std::move(reason);
  v.judged = false;
  return v;
}

Verdict unjudged(const Rule& rule, std::string reason) {
  Verdict v = skipped(rule, std::move(reason));
  v.status = Status::error;
  return v;
}

std::string figure(double value, const std::string& unit) {
  const double a = std::abs(value);
  if (is_count(unit)) return fmt::format("{:.0f} {}", value, unit);
  const std::string number = a != 0 && (a < 0.01 || a >= 1e6) ? fmt::format("{:.3g}", value)
                             : a < 10                         ? fmt::format("{:.3f}", value)
                                                              : fmt::format("{:.1f}", value);
  return unit.empty() ? number : unit == "%" ? number + "%" : number + " " + unit;
}

void judge(Verdict& v, Bound bound, double measured, double bound_value, const std::string& bound_text) {
  v.measured = measured;
  v.expected = bound_value;
  v.expected_text = fmt::format("{} {}", bound == Bound::min ? ">=" : "<=", bound_text);
  const bool ok = bound == Bound::min ? measured >= bound_value : measured <= bound_value;
  v.status = ok ? Status::pass : Status::fail;
  // Room left, as a fraction of the bound: +0.10 = 10% better than needed.
  // A zero bound (no wrong elements, no differences) has no such fraction.
  if (bound_value > 0) v.margin = (bound == Bound::min ? measured - bound_value : bound_value - measured) / bound_value;
}

Verdict evaluate_rule(const Rule& rule, const Results& run, const Results* baseline, const EvalOptions& options) {
  Verdict v;
  try {
    switch (rule.kind) {
      case RuleKind::absolute:
      case RuleKind::latency:
      case RuleKind::spec:
      case RuleKind::baseline:
        v = eval_row_limits(rule, run, baseline);
        break;
      case RuleKind::stability:
        v = eval_stability(rule, run);
        break;
      case RuleKind::correctness:
        v = eval_correctness(rule, run);
        break;
      case RuleKind::uniformity:
        v = rule.across == Across::ranks ? eval_rank_outliers(rule, run) : eval_heterogeneity(rule, run);
        break;
      case RuleKind::pairs:
        v = rule.pairs_across == PairsAcross::links ? eval_pairs(rule, run) : eval_pair_nodes(rule, run);
        break;
      case RuleKind::storage:
        v = eval_storage(rule, run);
        break;
      case RuleKind::smoothness:
        v = eval_smoothness(rule, run);
        break;
      case RuleKind::mixed_gpus:
        v = eval_mixed_gpus(rule, run);
        break;
      case RuleKind::transport:
        v = eval_transport(rule, run);
        break;
      case RuleKind::shared_gpus:
        v = eval_shared_gpus(rule, run);
        break;
      case RuleKind::environment:
        v = eval_environment(rule, run);
        break;
      case RuleKind::bimodal:
        v = eval_bimodal(rule, run);
        break;
      case RuleKind::hardware:
        v = eval_hardware(rule, run);
        break;
      case RuleKind::counters:
        v = eval_counters(rule, run);
        break;
    }
  } catch (const std::exception& e) {
    // A line of the record that does not have the shape the rule reads
    // (hand-edited, or written by a newer tool): the rule cannot be judged.
    return unjudged(rule, fmt::format("the results record cannot be read for this rule: {}", e.what()));
  }
  if (v.status == Status::skip && options.strict) {
    v.status = Status::error;
    v.reason = "--strict: " + v.reason;
  } else if (v.status == Status::skip && !rule.optional && !options.allow_skipped) {
    v.status = Status::fail;
    v.reason = fmt::format("not judged: {} (a rule the run cannot answer fails unless the profile marks it "
                           "optional: true, or with --allow-skipped)",
                           v.reason);
  }
  return v;
}

std::vector<Verdict> evaluate(const std::vector<Rule>& rules, const Results& run, const Results* baseline,
                              const EvalOptions& options) {
  std::vector<Verdict> out;
  out.reserve(rules.size());
  for (const auto& r : rules) out.push_back(evaluate_rule(r, run, baseline, options));
  const bool any_judged = std::any_of(out.begin(), out.end(), [](const Verdict& v) { return v.judged; });
  if (!any_judged && !options.allow_skipped)
    for (auto& v : out)
      if (v.status == Status::skip) {
        v.status = Status::fail;
        v.reason = fmt::format("not judged: {} (no rule of the profile could be judged: optional rules may skip, "
                               "not all of them)",
                               v.reason);
      }
  return out;
}

Counts count(const std::vector<Verdict>& verdicts) {
  Counts c;
  for (const auto& v : verdicts) {
    c.not_judged += !v.judged;
    switch (v.status) {
      case Status::pass:
        ++c.pass;
        break;
      case Status::fail:
        ++c.fail;
        break;
      case Status::skip:
        ++c.skip;
        break;
      case Status::error:
        ++c.error;
        break;
    }
  }
  return c;
}

int exit_code(const std::vector<Verdict>& verdicts) {
  const Counts c = count(verdicts);
  if (c.error > 0) return kExitUsage;
  return c.fail > 0 ? kExitFailed : kExitOk;
}

}  // namespace fb::accept
