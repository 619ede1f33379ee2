// `fabricbench report compare A B`: two results files side by side;
// `fabricbench report nccl-log FILE...`: the transports of NCCL's INFO logs;
// the record readers for scripts (report_rows.cpp): `report rows`, `steps`,
// `status`, `lines`, `scopes`, `storage`;
// the subcommands in their own files (report_subcommands.hpp): `report html`,
// `report import nccl-tests`. Runs alone (no MPI_Init).
#include <nlohmann/json.hpp>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

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
