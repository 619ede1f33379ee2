// The record readers for scripts, one table (kRecordReaders):
// `fabricbench report rows REC`: one tab-separated line per measurement row,
// with its times and what stopped it; `report steps REC`: one per mode of a
// `fabricbench step` record; `report status REC`: how the run ended;
// `report lines REC`: every line, checked, as JSON Lines at this binary's
// schema; `report scopes REC [--rows]`: the scopes measured; `report storage
// REC`: a storage record's rows. Scripts read a record through the binary
// (its reader and version checks) instead of matching its text.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <tuple>
#include <variant>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "report_subcommands.hpp"

namespace fb::cli {
namespace {

// The columns, named once: scripts find a column by this header, not by position.
constexpr const char* kRowsHeader =
    "op\tscope\tbytes\tplacement\titerations\tmedian_us\tmean_us\tci_low_us\tci_high_us\tstopped_by\n";

std::string row_line(const Measurement& m) {
  // %.17g is not needed: the record itself rounds times; 6 significant digits
  // keep a ratio of two rows exact to well under the noise of any timing.
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{:.6g}\t{:.6g}\t{:.6g}\t{:.6g}\t{}\n", m.op, m.scope, m.bytes,
                     m.in_place ? "in" : "out", m.time.iterations, m.time.median_us, m.time.mean_us, m.time.ci_low_us,
                     m.time.ci_high_us, m.stopped_by.empty() ? "-" : m.stopped_by);
}

int print_rows(const std::string& path, bool /*flag*/) {
  const Results r = read_or_usage(path);
  refuse_without(!r.measurements.empty(), r, "measurement rows", "a `fabricbench run`");
  std::fputs(kRowsHeader, stdout);
  for (const auto& m : r.measurements) std::fputs(row_line(m).c_str(), stdout);
  return kExitOk;
}

constexpr const char* kStepsHeader =
    "workload\tbackend\tmode\titerations\tmin_us\tmedian_us\tmean_us\tp99_us\tmax_us\tslowest_rank\t"
    "planned_compute_us\n";

std::string step_mode_line(const StepLine& s, const StepModeTimes& m) {
  return fmt::format("{}\t{}\t{}\t{}\t{:.6g}\t{:.6g}\t{:.6g}\t{:.6g}\t{:.6g}\t{}\t{:.6g}\n", s.workload, s.backend,
                     m.mode, m.iterations, m.time_min_us, m.time_median_us, m.time_mean_us, m.time_p99_us,
                     m.time_max_us, m.slowest_rank, s.planned_compute_us);
}

int print_steps(const std::string& path, bool /*flag*/) {
  const Results r = read_or_usage(path);
  refuse_without(!r.steps.empty(), r, "step lines", "a `fabricbench step --out`");
  std::fputs(kStepsHeader, stdout);
  for (const auto& s : r.steps)
    for (const auto& m : s.modes) std::fputs(step_mode_line(s, m).c_str(), stdout);
  return kExitOk;
}

// How the run ended, one line: the summary's status ("complete", "hang",
// "rank_lost", "error", "killed") or "incomplete" (no closing line: rank 0
// killed, or the file cut), then, when it did not complete, a tab and why.
int print_status(const std::string& path, bool /*flag*/) {
  const Results r = read_or_usage(path);
  std::string why;
  if (r.summary && !r.complete) why = r.summary->reason.substr(0, r.summary->reason.find('\n'));
  if (!r.summary)
    why = r.truncated ? r.truncated_note : "no closing line: rank 0 ended before writing it (killed, or its host lost)";
  std::fputs(fmt::format("{}{}{}\n", r.status, why.empty() ? "" : "\t", why).c_str(), stdout);
  return kExitOk;
}

// Every line of a record as this binary reads it: checked, at this binary's
// schema (an older record's lines with the keys they have now), one JSON
// object a line, the header first, then each kind of line in the order of
// Results, the summary last when there is one. For scripts that need more of
// a line than the tables above carry (scripts/plot.py): what they parse is
// what the reader accepted, not the file's text.
int print_lines(const std::string& path, bool /*flag*/) {
  const Results r = read_or_usage(path);
  const auto put = [](const std::string& text) { std::fputs(text.c_str(), stdout); };
  const auto each = [&](const auto& lines) {
    for (const auto& line : lines) put(line_text(RecordLine(line)));
  };
  put(line_text(RecordLine(r.header)));
  const auto kinds = std::tie(r.inventory, r.measurements, r.skips, r.pairs, r.nodes, r.findings, r.checks, r.gemms,
                              r.steps, r.step_models, r.storage, r.diagnoses, r.counters);
  // Every kind of line but the header, which comes first: a kind added to
  // RecordLine and not here would be left out of what scripts see.
  static_assert(std::tuple_size_v<decltype(kinds)> + 1 == std::variant_size_v<RecordLine>,
                "report lines prints every kind of record line: add the new kind's vector of Results to `kinds`");
  std::apply([&](const auto&... lines) { (each(lines), ...); }, kinds);
  if (r.summary) put(line_text(*r.summary));
  return kExitOk;
}

// The scopes of a record's measurement rows, once each, in the order first
// measured: what a script reads to choose a --network for `model`
// (scripts/measured-network.sh), instead of matching the record's text.
// With `rows`, each scope's row count after a tab (bench/scripts/bench-report-html.sh).
int print_scopes(const std::string& path, bool rows) {
  const Results r = read_or_usage(path);
  std::vector<std::pair<std::string, std::size_t>> scopes;
  for (const auto& m : r.measurements) {
    const auto seen = std::find_if(scopes.begin(), scopes.end(), [&](const auto& s) { return s.first == m.scope; });
    if (seen == scopes.end())
      scopes.emplace_back(m.scope, 1);
    else
      ++seen->second;
  }
  refuse_without(!scopes.empty(), r, "measurement rows", "a `fabricbench run`");
  for (const auto& [scope, count] : scopes) std::printf(rows ? "%s\t%zu\n" : "%s\n", scope.c_str(), count);
  return kExitOk;
}

// `report storage`'s help names its columns, in order: the line's keys of the
// same names. New columns go at the end: scripts read them by position.
constexpr const char* kStorageHelp =
    "a `fabricbench storage` record's rows, one a line in the order measured, tab-separated columns: target pattern "
    "mode nodes block_bytes file_bytes files cache io_engine queue_depth sync aggregate_gbps fs_type shared bytes "
    "hosts";

// A `fabricbench storage` record's rows, one a line, tab-separated, in the
// order measured: what bench/scripts/storage-vs-fio.sh reads instead of
// matching the record's text.
int print_storage(const std::string& path, bool /*flag*/) {
  const Results r = read_or_usage(path);
  refuse_without(!r.storage.empty(), r, "storage rows", "a `fabricbench storage --out`");
  for (const auto& l : r.storage)
    std::fputs(
        fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", l.target, l.pattern, l.mode,
                    l.nodes, l.block_bytes, l.file_bytes, l.files, l.cache, l.io_engine, l.queue_depth, l.sync,
                    l.aggregate_gbps, l.fs_type, l.shared ? "true" : "false", l.bytes, fmt::join(l.hosts, ","))
            .c_str(),
        stdout);
  return kExitOk;
}

}  // namespace

Results read_or_usage(const std::string& path) {
  try {
    return read_results(path);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

void refuse_without(bool has, const Results& r, std::string_view lines, std::string_view give) {
  if (!has)
    throw UsageError(fmt::format("'{}' has no {} (it is a `fabricbench {}` record): give the record of {}", r.path,
                                 lines, r.header.command, give));
}

namespace {

// A subcommand that prints one record's lines for scripts: its one argument
// is the record, `print` does the rest, told whether its one flag was given.
struct RecordReader {
  const char* name;
  const char* description;
  const char* record_help;
  int (*print)(const std::string& path, bool flag);
  const char* flag = nullptr;  // a flag of its own, when it has one
  const char* flag_help = nullptr;
};

constexpr RecordReader kRecordReaders[] = {
    {"rows",
     "the measurement rows of a results file, one a line, tab-separated under a header line: op, scope, bytes, "
     "placement (in/out), iterations, median/mean time and the median's 95% interval in us, stopped_by (- for a fixed "
     "-n)",
     "results file (.jsonl)", print_rows},
    {"steps",
     "a `fabricbench step` record's modes (compute_only, comm_only, serial, overlapped), one a line, tab-separated "
     "under a header line: workload, backend, mode, iterations, min/median/mean/p99/max step time and the slowest "
     "rank, and the step's planned compute in us",
     "a step record (.jsonl)", print_steps},
    {"status",
     "how a results file's run ended, one line: complete, hang, rank_lost, error, killed, or incomplete (no closing "
     "line), then for a run that did not complete a tab and why; exit 0 whatever the status",
     "results file (.jsonl)", print_status},
    {"lines",
     "every line of a results file as this binary reads it: checked, one JSON object a line at this binary's schema "
     "(an older record's lines with today's keys), the header first, the summary last; a damaged or newer record is "
     "refused (exit 2)",
     "results file (.jsonl)", print_lines},
    {"scopes", "the scopes a results file measured, one a line, in the order first measured", "results file (.jsonl)",
     print_scopes, "--rows", "after each scope a tab and its number of measurement rows"},
    {"storage", kStorageHelp, "storage record (.jsonl)", print_storage},
};

ReportSubcommand record_reader(CLI::App& report, const RecordReader& r) {
  auto path = std::make_shared<std::string>();
  auto flag = std::make_shared<bool>(false);
  auto* app = report.add_subcommand(
      r.name, std::string(r.description) + " (for scripts: read a record through the binary, not its text)");
  app->add_option("results", *path, r.record_help)->required();
  if (r.flag) app->add_flag(r.flag, *flag, r.flag_help);
  return {app, [path, flag, print = r.print](int, char**) { return print(*path, *flag); }};
}

}  // namespace

std::vector<ReportSubcommand> add_record_readers(CLI::App& report) {
  std::vector<ReportSubcommand> added;
  for (const RecordReader& r : kRecordReaders) added.push_back(record_reader(report, r));
  return added;
}

}  // namespace fb::cli
