// `fabricbench report compare A B`: two results files side by side;
// `fabricbench report nccl-log FILE...`: the transports of NCCL's INFO logs;
// `fabricbench report scopes FILE`: the scopes a record measured, for scripts;
// `fabricbench report storage FILE`: a storage record's rows, for scripts;
// `fabricbench report rows FILE` (report_rows.cpp): each row's times, for scripts;
// the subcommands in their own files (report_subcommands.hpp): `report html`,
// `report import nccl-tests`. Runs alone (no MPI_Init).
#include <nlohmann/json.hpp>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "alone.hpp"
#include "commands.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/report.hpp"
#include "report_nccl_log.hpp"
#include "report_subcommands.hpp"

namespace fb::cli {
namespace {

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
  for (const auto& [scope, count] : scopes)
    std::printf(rows ? "%s\t%zu\n" : "%s\n", scope.c_str(), count);
  return kExitOk;
}

// The columns of `report storage`, in order: the line's keys of the same names.
// New columns go at the end: scripts read them by position.
constexpr const char* kStorageColumns =
    "target pattern mode nodes block_bytes file_bytes files cache io_engine queue_depth sync aggregate_gbps fs_type "
    "shared bytes hosts";

// A `fabricbench storage` record's rows, one a line, tab-separated, in the
// order measured: what bench/scripts/storage-vs-fio.sh reads instead of
// matching the record's text.
int print_storage(const std::string& path) {
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

int report_main(int argc, char** argv) {
  CLI::App app{"Results records for people: compared, as one HTML page, or imported from nccl-tests; NCCL INFO logs read "
               "for the transports used. Runs alone, "
               "without mpirun.",
               "fabricbench report"};
  app.require_subcommand(1);
  std::string a, b, format = "text";
  bool fail_on_difference = false;
  auto* compare = app.add_subcommand("compare", "two runs side by side per op, scope and size: ratios, and the rows "
                                                "that differ beyond their run-to-run spread");
  compare->add_option("a", a, "first results file (.jsonl), e.g. vendor A or before")->required();
  compare->add_option("b", b, "second results file, e.g. vendor B or after")->required();
  compare->add_option("--format", format, "text, json or csv")->capture_default_str();
  compare->add_flag("--fail-on-difference", fail_on_difference,
                    "exit 1 when a row is slower in b beyond the spread, or a row of a is missing from b");
  std::vector<std::string> logs;
  std::string log_format = "text";
  auto* nccl_log = app.add_subcommand(
      "nccl-log", "which transports NCCL used between each pair of ranks and nodes, from NCCL_DEBUG=INFO logs (a "
                  "training job's, an nccl-tests run's; mpirun/srun prefixes are fine): P2P, SHM, NET/IB with or "
                  "without GPUDirect RDMA, NET/Socket, plugins, NVLS, CollNet, and a verdict per node pair");
  nccl_log->add_option("files", logs, "NCCL log files (one per rank, or merged; - for stdin)")->required();
  nccl_log->add_option("--format", log_format, "text or json")->capture_default_str();
  std::string scopes_of;
  auto* scopes = app.add_subcommand("scopes", "the scopes a results file measured, one a line, in the order first "
                                              "measured (for scripts: read a record through the binary, not its text)");
  scopes->add_option("results", scopes_of, "results file (.jsonl)")->required();
  bool scope_rows = false;
  scopes->add_flag("--rows", scope_rows, "after each scope a tab and its number of measurement rows");
  std::string storage_of;
  auto* storage = app.add_subcommand(
      "storage", fmt::format("a `fabricbench storage` record's rows, one a line in the order measured, tab-separated "
                             "columns: {} (for scripts: read a record through the binary, not its text)",
                             kStorageColumns));
  storage->add_option("results", storage_of, "storage record (.jsonl)")->required();
  std::vector<ReportSubcommand> added{
      add_report_html(app),
      add_report_import(app),
      add_report_verdict(app),
      add_report_blamed(app),
  };
  for (ReportSubcommand& reader : add_record_readers(app)) added.push_back(std::move(reader));
  if (argc < 2) return list_subcommands("report", app);
  return run_alone("report", app, [&]() -> int {
    app.parse(argc, argv);
    if (nccl_log->parsed()) return report_nccl_log(logs, log_format);
    if (scopes->parsed()) return print_scopes(scopes_of, scope_rows);
    if (storage->parsed()) return print_storage(storage_of);
    for (const auto& sub : added)
      if (sub.app->parsed()) return sub.run(argc, argv);
    const model::Format fmt = model::parse_format(format);
    const Results ra = read_or_usage(a), rb = read_or_usage(b);
    const model::Comparison c = model::compare_results(ra, rb);
    std::fputs(model::render(fmt, model::compare_table(c, a, b), model::compare_json(c, a, b)).c_str(), stdout);
    return fail_on_difference && (c.slower > 0 || c.only_a > 0) ? int{kExitFailed} : int{kExitOk};
  });
}

}  // namespace fb::cli
