// `fabricbench report import nccl-tests FILE... --out REC.jsonl`: nccl-tests'
// text or -J JSON output as a fabricbench record, through the record's own
// structs and writer (report/nccl_tests.hpp does the reading).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <set>

#include "build_identity.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/output_file.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/types.hpp"
#include "fabricbench/report/nccl_tests.hpp"
#include "fabricbench/version.hpp"
#include "record_header.hpp"
#include "report_subcommands.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

struct ImportFlags {
  std::vector<std::string> files;
  std::string out;
  bool overwrite = false;
  report::ImportOptions options;
  std::vector<std::string> argv;
};

std::string ops_of(const report::NcclTestsImport& import) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& t : import.tables)
    if (seen.insert(t.op).second) out += (out.empty() ? "" : ", ") + t.op;
  return out;
}

int run_import(const ImportFlags& f) {
  if (!f.options.op.empty() && !parse_op(f.options.op))
    throw UsageError(fmt::format("--op '{}' is unknown; allowed: {}", f.options.op, allowed_ops()));
  if (auto err = check_not_an_input(f.out, "--out", f.files); !err.empty()) throw UsageError(err);
  const report::NcclTestsImport import = report::read_nccl_tests(f.files, f.options);
  report::ImportRecord rec = report::import_record(import, make_run_id());
  if (rec.rows.empty()) {  // a record of no rows once ended with exit 0
    // read_nccl_tests refuses a file without a table: here every table had no row of a size above 0.
    std::string why = "tables without a row of a size above 0";
    for (const auto& n : import.notes) why += "; " + n;
    for (const auto& e : import.failures) why += "; " + e;
    throw UsageError(fmt::format("nothing to import from {}: {}; give nccl-tests output that measured at least one size",
                                 fmt::join(f.files, ", "), why));
  }
  rec.header.version = kVersion;
  rec.header.argv = f.argv;
  rec.header.start_time = utc_now();
  rec.header.build = build_identity();
  RecordWriter writer;
  if (auto err = writer.open(f.out, f.overwrite); !err.empty()) throw UsageError(err);
  writer.write(rec.header);
  for (const auto& m : rec.rows) writer.write(m);
  writer.seal(rec.summary);
  if (auto err = writer.error(); !err.empty()) {
    user_log().error("fabricbench report: {}", err);
    return kExitRunError;
  }
  for (const auto& n : import.notes) user_log().info("fabricbench report: note: {}", n);
  for (const auto& e : import.failures) user_log().warn("fabricbench report: warning: {}", e);
  std::printf("imported %zu rows of %zu nccl-tests test(s) (%s) on %d rank%s%s from %zu file(s) into %s%s%s\n",
              rec.rows.size(), import.tables.size(), ops_of(import).c_str(), rec.header.ranks,
              rec.header.ranks == 1 ? "" : "s",
              rec.header.nodes > 0 ? fmt::format(" of {} host(s)", rec.header.nodes).c_str() : "", f.files.size(),
              f.out.c_str(), import.nccl_version.empty() ? "" : ("; NCCL " + import.nccl_version).c_str(),
              import.failures.empty() ? "" : "; its summary says error: a test did not finish (see the warnings)");
  return kExitOk;
}

}  // namespace

ReportSubcommand add_report_import(CLI::App& report) {
  auto* import = report.add_subcommand("import", "turn another tool's results into a fabricbench record");
  import->require_subcommand(1);
  auto flags = std::make_shared<ImportFlags>();
  auto* nccl = import->add_subcommand(
      "nccl-tests", "nccl-tests' output (the text a *_perf binary prints, mpirun/srun prefixes and several tests in "
                    "one log are fine, or its -J JSON) as a record for compare, html, model fit and check --results");
  nccl->add_option("files", flags->files, "nccl-tests logs or -J JSON files")->required()->check(CLI::ExistingFile);
  nccl->add_option("--out", flags->out, "the record to write (.jsonl)")->required();
  nccl->add_flag("--overwrite", flags->overwrite, "replace --out when it exists (refused without it)");
  nccl->add_option("--op", flags->options.op,
                   "the op of tables whose log names no test binary (all_reduce, all_gather, ...)");
  nccl->add_option("--ranks", flags->options.ranks, "the rank count of logs that list no '#  Rank' lines")
      ->check(CLI::Range(1, 1 << 24));
  return {import, [flags](int argc, char** argv) {
            flags->argv.assign(argv, argv + argc);
            return run_import(*flags);
          }};
}

}  // namespace fb::cli
