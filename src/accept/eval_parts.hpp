// Pieces of rule evaluation (internal): finding rows, judging a figure
// against a limit, and one evaluator per family of kinds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/accept/evaluate.hpp"
#include "fabricbench/accept/rule.hpp"
#include "fabricbench/accept/spec_peak.hpp"
#include "fabricbench/core/record.hpp"

namespace fb::accept {

// Measurement lines that match the filter (sizes compared after the
// engine's rounding, which layout_for reproduces).
std::vector<const Measurement*> select_rows(const Results& results, const RowFilter& filter);
// Why select_rows found nothing: the run's own skip line when there is one,
// else which of op, scope, placement, datatype or size is missing and what was measured.
std::string why_no_rows(const Results& results, const RowFilter& filter);

double metric_value(const Measurement& m, Metric metric);
// "all_reduce/inter 1 GiB out-of-place"
std::string row_label(const Measurement& m);
CheckRow row_json(const Measurement& m);
// "node3" for a world rank, from the run header; "" when unknown.
[[nodiscard]] std::string host_of(const Results& results, int rank);

// A verdict for `rule` that has not been judged yet.
Verdict start_verdict(const Rule& rule);
Verdict skipped(const Rule& rule, std::string reason);
Verdict unjudged(const Rule& rule, std::string reason);  // an error: bad input, not a failed rule
// Sets status, expected, margin and the expected text from `measured` and
// `bound` (both in the verdict's unit). `bound_text` is shown as the expectation.
void judge(Verdict& v, Bound bound, double measured, double bound_value, const std::string& bound_text);

// Family evaluators.
Verdict eval_row_limits(const Rule& rule, const Results& run,
                        const Results* baseline);  // absolute, latency, spec, baseline
Verdict eval_stability(const Rule& rule, const Results& run);
Verdict eval_correctness(const Rule& rule, const Results& run);
Verdict eval_rank_outliers(const Rule& rule, const Results& run);
Verdict eval_heterogeneity(const Rule& rule, const Results& run);
Verdict eval_pairs(const Rule& rule, const Results& run);       // across links
Verdict eval_pair_nodes(const Rule& rule, const Results& run);  // across nodes
Verdict eval_storage(const Rule& rule, const Results& run);
Verdict eval_smoothness(const Rule& rule, const Results& run);
Verdict eval_mixed_gpus(const Rule& rule, const Results& run);
Verdict eval_transport(const Rule& rule, const Results& run);
Verdict eval_shared_gpus(const Rule& rule, const Results& run);
Verdict eval_environment(const Rule& rule, const Results& run);
Verdict eval_bimodal(const Rule& rule, const Results& run);
Verdict eval_hardware(const Rule& rule, const Results& run);
Verdict eval_counters(const Rule& rule, const Results& run);

// A pair line's figure of `metric` (docs/results-schema.md, `pair`): a link's
// unidir is its slower direction, since either way can be the degraded one.
std::optional<double> pair_figure(const PairLine& line, PairMetric metric);

// Units of verdicts that count things rather than measure them.
inline constexpr const char* kUnitWrong = "wrong elements";
inline constexpr const char* kUnitFields = "fields differ";
inline constexpr const char* kUnitBreaks = "sizes off the curve";
inline constexpr const char* kUnitModels = "GPU models";
inline constexpr const char* kUnitGpus = "GPUs";
inline constexpr const char* kUnitNics = "NICs";
inline constexpr const char* kUnitNodes = "nodes";
inline constexpr const char* kUnitLines = "inventory lines";
inline constexpr const char* kUnitSocketRows = "rows on sockets";
inline constexpr const char* kUnitSharedGpus = "shared GPUs";
inline constexpr const char* kUnitEnvFlags = "settings flagged";
inline constexpr const char* kUnitBimodalRows = "bimodal rows";
bool is_count(const std::string& unit);

// "1.23 GB/s" style numbers for messages; counts as whole numbers.
std::string figure(double value, const std::string& unit);

}  // namespace fb::accept
