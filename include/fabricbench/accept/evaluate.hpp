// Rule evaluation: a pure function of the rules and parsed results records,
// so it runs the same on a live run, on `check --results FILE` and in unit
// tests on recorded files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/accept/rule.hpp"
#include "fabricbench/core/record.hpp"

namespace fb::accept {

enum class Status { pass, fail, skip, error };
std::string_view name(Status status);

// A node, rank or link a rule blames, as data (check.json "bad"), so a
// dashboard can drain exactly those nodes.
struct Offender {
  std::string host;   // the node blamed
  int rank = -1;      // the rank, when the rule judged ranks; -1 for a link
  std::string peer;   // the other end, when the rule judged node pairs
  double figure = 0;  // what was measured of it, in `unit`
  std::string unit;
  std::string device{};  // the node's port, interface or PCI function (counters); {}: others leave it out
};

struct Verdict {
  std::string rule;
  RuleKind kind = RuleKind::absolute;
  Status status = Status::skip;
  std::optional<double> measured;  // in `unit`
  std::optional<double> expected;  // the bound in `unit` (relative bounds resolved)
  std::string unit;                // "GB/s", "us", "%", "wrong elements", "x median", "fields"
  std::string expected_text;       // ">= 40 GB/s", ">= 0.80 of spec (50 GB/s)"
  std::optional<double> margin;    // room left as a fraction of the bound; < 0 failed
  std::string reason;              // why it failed, skipped or could not be judged
  std::optional<CheckRow> row;     // the deciding row (op, scope, bytes, ...) when there is one
  bool optional = false;           // the rule's `optional: true`
  bool judged = true;              // false: the record could not answer the rule (a SKIP, or its FAIL or ERROR)
  std::vector<Offender> offenders; // what a failed rule blames (ranks above the bound, links below it, ...)
};

struct EvalOptions {
  // A rule that cannot be judged (a size not measured, no inventory) is an
  // error (exit 2) instead of a SKIP.
  bool strict = false;
  // --allow-skipped: such a rule is a SKIP even when the profile does not
  // mark it optional (by default it FAILs: a check must not pass on what it
  // did not measure).
  bool allow_skipped = false;
};

// `baseline` may be null; baseline rules then report an error. A rule that
// cannot be judged is a SKIP when optional (or with allow_skipped), else a
// FAIL; when no rule at all could be judged the skips fail too: a check that
// measured nothing of what it asks does not pass.
std::vector<Verdict> evaluate(const std::vector<Rule>& rules, const Results& run, const Results* baseline,
                              const EvalOptions& options);
Verdict evaluate_rule(const Rule& rule, const Results& run, const Results* baseline, const EvalOptions& options);

// "" when `baseline` can be compared with `run`; otherwise what differs (rank
// count, node count, the set of ops or scopes measured) and what to do.
[[nodiscard]] std::string baseline_mismatch(const Results& run, const Results& baseline);

struct Counts {
  int pass = 0;
  int fail = 0;
  int skip = 0;
  int error = 0;
  int not_judged = 0;  // of the above, rules the record could not answer (skips, and the fails and errors they became)
  int total() const { return pass + fail + skip + error; }
};
Counts count(const std::vector<Verdict>& verdicts);

// 2 when any rule could not be judged under --strict (or a profile error),
// else 1 when any failed, else 0.
int exit_code(const std::vector<Verdict>& verdicts);

}  // namespace fb::accept
