#include "check_verdict.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fabricbench/accept/evaluate.hpp"
#include "fabricbench/accept/profile.hpp"
#include "fabricbench/accept/report.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/output_file.hpp"
#include "record_header.hpp"

namespace fb::cli {
namespace {

accept::Report make_report(const CheckSetup& setup, const CheckFlags& flags, const std::string& results_path,
                           int ranks, std::vector<std::string> hosts) {
  accept::Report r;
  r.profile = setup.profile.name;
  r.profile_path = setup.profile_path;
  r.results_path = results_path;
  r.baseline_path = flags.baseline;
  r.hostname = host_name();
  r.timestamp = utc_now();
  r.ranks = ranks;
  r.hosts = std::move(hosts);
  r.strict = flags.strict;
  return r;
}

// Why a recorded run cannot be judged as a whole: "" when it finished.
[[nodiscard]] std::string unfinished(const Results& r) {
  if (r.complete) return {};
  if (!r.summary)
    return fmt::format("the record '{}' has no summary{}: the run was cut off (rank 0 killed or its host lost)", r.path,
                       r.truncated ? " and its last line is cut" : "");
  return fmt::format("the record '{}' did not finish: its summary says {}{}{}", r.path, r.status,
                     r.summary->reason.empty() ? "" : ": ", r.summary->reason);
}

// check.json and junit.xml; "" or the problem.
[[nodiscard]] std::string write_outputs(const CheckOutputs& out, const accept::Report& report) {
  std::string err = write_file_atomically(out.json, accept::check_json_text(report));
  if (err.empty()) err = write_file_atomically(out.junit, accept::to_junit_xml(report));
  return err;
}

}  // namespace

int header_ranks(const Results& r) { return r.header.ranks; }

std::string copy_record(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return fmt::format("--save-baseline: cannot read '{}': {}", from, std::strerror(errno));
  const std::string err = write_file_atomically(to, text.str());
  return err.empty() ? err : "--save-baseline: " + err;
}

namespace {

// "" when `results` is a kind of record the profile's rules can judge, else
// why not: a topo, step, gemm or diagnose record has no rows for any rule,
// and a storage record none for a profile without storage rules (each was
// once judged, every rule failed, and the exit code said "a rule failed").
[[nodiscard]] std::string wrong_kind(const Results& results, const accept::Profile& profile, const std::string& path) {
  const std::string& kind = results.header.command;
  const bool storage = kind == "storage";
  if (kind == "run" || kind == "check" || kind == "pairs" || kind == "import" ||
      (storage && accept::has_storage_rules(profile)))
    return "";
  return fmt::format("--results '{}' is the record of `fabricbench {}`, which {}; give the record of a run, pairs, "
                     "check{} or report import",
                     path, kind, storage ? "this profile has no rule for (it has no storage rule)" : "no rule judges",
                     accept::has_storage_rules(profile) ? ", storage" : "");
}

}  // namespace

Judgement judge(const CheckSetup& setup, const CheckFlags& flags, const std::string& results_path, double elapsed_s,
                RowSink* record, const std::string& output_error) {
  Results results;
  try {
    results = read_results(results_path);
  } catch (const std::exception& e) {
    user_log().error("fabricbench check: {}", e.what());
    return {record ? kExitRunError : kExitUsage, {}};
  }
  if (!record) {
    try {
      refuse_simulated(results, results_path);
    } catch (const UsageError& e) {
      user_log().error("fabricbench check: {}", e.what());
      return {kExitUsage, {}};
    }
    if (const std::string why = wrong_kind(results, setup.profile, results_path); !why.empty()) {
      user_log().error("fabricbench check: {}", why);
      return {kExitUsage, {}};
    }
  }
  accept::Report report = make_report(setup, flags, results_path, header_ranks(results), results.header.hosts);
  report.elapsed_s = elapsed_s;
  report.verdicts = accept::evaluate(setup.profile.rules, results, setup.baseline ? &*setup.baseline : nullptr,
                                     {flags.strict, flags.allow_skipped});
  // Rules judged on part of a run say nothing of the rest: such a verdict is
  // "incomplete" whatever they say.
  report.run_error = record ? output_error : unfinished(results);
  if (!report.run_error.empty()) user_log().error("fabricbench check: {}", report.run_error);
  const int code = report.run_error.empty() ? accept::exit_code(report.verdicts) : kExitRunError;
  if (record) {
    for (const auto& v : report.verdicts) record->record_line(accept::check_line(v));
  }
  Judgement j{code, accept::format_table(report.verdicts) + fmt::format("{}; exit code {}; verdict in {} and {}\n",
                                                                        accept::format_summary(report), code,
                                                                        setup.outputs.json, setup.outputs.junit)};
  if (auto err = write_outputs(setup.outputs, report); !err.empty()) {
    user_log().error("fabricbench check: {}", err);
    j.code = kExitRunError;
  }
  return j;
}

namespace {

void write_unjudged(const CheckSetup& setup, const CheckFlags& flags, int ranks, const std::vector<std::string>& hosts,
                    const std::string& run_error, int exit_code) {
  accept::Report r = make_report(setup, flags, setup.outputs.record, ranks, hosts);
  r.run_error = run_error;
  r.run_exit_code = exit_code;
  // Every rule stays in check.json and junit.xml, unjudged, so the files keep
  // the shape of a finished check.
  for (const auto& rule : setup.profile.rules) {
    accept::Verdict v;
    v.rule = rule.name;
    v.kind = rule.kind;
    v.status = accept::Status::error;
    v.reason = r.run_error;
    v.optional = rule.optional;
    v.judged = false;
    r.verdicts.push_back(std::move(v));
  }
  if (auto err = write_outputs(setup.outputs, r); !err.empty()) spdlog::warn("{}", err);
}

}  // namespace

void write_placeholder(const CheckSetup& setup, const CheckFlags& flags, int ranks,
                       const std::vector<std::string>& hosts, const std::string& why) {
  const std::string started = make_report(setup, flags, setup.outputs.record, ranks, hosts).timestamp;
  write_unjudged(setup, flags, ranks, hosts,
                 why.empty() ? fmt::format("the run started at {} did not finish (a rank failed, hung or was killed): "
                                           "see the job's output, and {} for the rows it finished",
                                           started, setup.outputs.record)
                             : fmt::format("the run did not finish: {}; {} has the rows it finished", why,
                                           setup.outputs.record),
                 kExitRunError);
}

void write_refusal(const CheckSetup& setup, const CheckFlags& flags, int ranks, const std::vector<std::string>& hosts,
                   const std::string& why) {
  write_unjudged(setup, flags, ranks, hosts, fmt::format("the run was refused before measuring: {}", why), kExitUsage);
}

}  // namespace fb::cli
