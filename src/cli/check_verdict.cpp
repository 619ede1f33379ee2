#include "check_verdict.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "fabricbench/accept/evaluate.hpp"
#include "fabricbench/accept/report.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "record_header.hpp"

namespace fb::cli {
namespace {

accept::Report make_report(const CheckSetup& setup, const CheckFlags& flags, const std::string& results_path,
                           int ranks) {
  accept::Report r;
  r.profile = setup.profile.name;
  r.profile_path = setup.profile_path;
  r.results_path = results_path;
  r.baseline_path = flags.baseline;
  r.hostname = host_name();
  r.timestamp = utc_now();
  r.ranks = ranks;
  r.strict = flags.strict;
  return r;
}

// check.json and junit.xml; "" or the problem.
std::string write_outputs(const CheckOutputs& out, const accept::Report& report) {
  std::string err = write_file_atomically(
      out.json, accept::to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (err.empty()) err = write_file_atomically(out.junit, accept::to_junit_xml(report));
  return err;
}

}  // namespace

int header_ranks(const Results& r) {
  const auto it = r.run().find("ranks");
  return it != r.run().end() && it->is_number_integer() ? it->get<int>() : -1;
}

std::string copy_record(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  return ec ? fmt::format("--save-baseline '{}': {}", to, ec.message()) : std::string();
}

Judgement judge(const CheckSetup& setup, const CheckFlags& flags, const std::string& results_path, double elapsed_s,
                RowSink* record) {
  Results results;
  try {
    results = read_results(results_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabricbench check: %s\n", e.what());
    return {record ? kExitRunError : kExitUsage, {}};
  }
  accept::Report report = make_report(setup, flags, results_path, header_ranks(results));
  report.elapsed_s = elapsed_s;
  report.verdicts =
      accept::evaluate(setup.profile.rules, results, setup.baseline ? &*setup.baseline : nullptr, {flags.strict});
  const int code = accept::exit_code(report.verdicts);
  if (record) {
    for (const auto& v : report.verdicts) record->record_line(accept::to_json(v));
  }
  Judgement j{code, accept::format_table(report.verdicts) + fmt::format("{}; exit code {}; verdict in {} and {}\n",
                                                                        accept::format_summary(report), code,
                                                                        setup.outputs.json, setup.outputs.junit)};
  if (auto err = write_outputs(setup.outputs, report); !err.empty()) {
    std::fprintf(stderr, "fabricbench check: %s\n", err.c_str());
    j.code = kExitRunError;
  }
  return j;
}

void write_placeholder(const CheckSetup& setup, const CheckFlags& flags, int ranks, const std::string& why) {
  accept::Report r = make_report(setup, flags, setup.outputs.record, ranks);
  r.run_error = why.empty() ? fmt::format("the run started at {} did not finish (a rank failed, hung or was killed): "
                                          "see the job's output, and {} for the rows it finished",
                                          r.timestamp, setup.outputs.record)
                            : fmt::format("the run did not finish: {}; {} has the rows it finished", why,
                                          setup.outputs.record);
  if (auto err = write_outputs(setup.outputs, r); !err.empty()) spdlog::warn("{}", err);
}

}  // namespace fb::cli
