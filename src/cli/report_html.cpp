// `fabricbench report html REC... [--check check.json] [--workload W --quotes Q]
// -o report.html`: one self-contained page (report/html.hpp renders it),
// written through the output helper: no link followed, no file replaced
// without --overwrite, never half a page.
#include <fmt/format.h>

#include <cstdio>

#include "build_identity.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/output_file.hpp"
#include "fabricbench/model/fit.hpp"
#include "fabricbench/report/html.hpp"
#include "record_header.hpp"
#include "preset_flags.hpp"
#include "report_subcommands.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

struct HtmlFlags {
  std::vector<std::string> records;
  std::string check, workload, quotes, out;
  PresetFlags presets;
  bool overwrite = false;
};

report::HtmlInputs inputs_of(const HtmlFlags& f) {
  report::HtmlInputs in;
  if (f.records.empty() && f.check.empty() && f.quotes.empty())
    throw UsageError("nothing to report: give results records, --check check.json or --workload W --quotes Q");
  if (f.quotes.empty() != f.workload.empty())
    throw UsageError("--workload and --quotes go together: the quotes are priced for that workload");
  if (f.records.size() > 26) throw UsageError(fmt::format("{} records: at most 26 (A to Z) on one page", f.records.size()));
  for (std::size_t i = 0; i < f.records.size(); ++i) {
    report::RecordInput r;
    r.path = f.records[i];
    r.label = std::string(1, static_cast<char>('A' + i));
    r.results = model::load_results(r.path);  // refuses FIFOs and devices; errors name the file and line
    in.records.push_back(std::move(r));
  }
  if (!f.check.empty()) in.check = report::read_check_json(f.check);
  if (!f.quotes.empty()) {
    report::QuotesInput q;
    q.workload_path = f.workload;
    q.quotes_path = f.quotes;
    q.workload = model::load_workload(f.workload);
    q.quotes = model::load_quotes(f.quotes);
    q.presets = presets_of(f.presets, q.quotes.presets);
    say_preset_changes("report html", q.presets);
    in.quotes = std::move(q);
  }
  const BuildRef b = build_identity();
  in.generator = fmt::format("fabricbench {} ({}{})", b.version, b.git_commit, b.git_dirty ? ", uncommitted changes" : "");
  in.generated_at = utc_now();
  return in;
}

int run_html(const HtmlFlags& f) {
  if (auto err = check_output(f.out, "-o", f.overwrite); !err.empty()) throw UsageError(err);
  std::vector<std::string> sources = f.records;
  for (const auto* extra : {&f.check, &f.quotes, &f.workload})
    if (!extra->empty()) sources.push_back(*extra);
  if (auto err = check_not_an_input(f.out, "-o", sources); !err.empty()) throw UsageError(err);
  const report::HtmlInputs in = inputs_of(f);
  const std::string page = report::render_html(in);
  if (auto err = write_file_atomically(f.out, page); !err.empty()) {
    user_log().error("fabricbench report: {}", err);
    return kExitRunError;
  }
  std::printf("wrote %s (%zu bytes) from %zu record(s)%s%s\n", f.out.c_str(), page.size(), in.records.size(),
              in.check ? ", a check verdict" : "", in.quotes ? ", quotes priced for the workload" : "");
  return kExitOk;
}

}  // namespace

ReportSubcommand add_report_html(CLI::App& report) {
  auto flags = std::make_shared<HtmlFlags>();
  auto* html = report.add_subcommand(
      "html", "one self-contained HTML page (no network needed to open or print it): runs and hardware, busbw and "
              "time curves with their spread and spec peaks, two or more records side by side, the pair matrix, "
              "the acceptance verdict and bad nodes, and with --workload/--quotes what each quote costs");
  html->add_option("records", flags->records, "results records (.jsonl): A, B, ... in this order");
  html->add_option("--check", flags->check, "check.json of `fabricbench check` (else the records' check lines)");
  html->add_option("-w,--workload", flags->workload, "workload YAML for the quotes (profiles/workloads/)");
  html->add_option("-q,--quotes", flags->quotes, "quotes YAML to price for the workload (profiles/quotes/)");
  add_preset_flags(html, flags->presets);
  html->add_option("-o,--out", flags->out, "the page to write (.html)")->required();
  html->add_flag("--overwrite", flags->overwrite, "replace -o when it exists (refused without it)");
  return {html, [flags](int, char**) { return run_html(*flags); }};
}

}  // namespace fb::cli
