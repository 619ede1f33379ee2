// `fabricbench report verdict CHECK.json`: the verdict of a `fabricbench
// check` as one line, "STATUS EXIT_CODE" ("fail 1"), for the launch scripts
// (scripts/acceptance-mpirun.sh, scripts/slurm/acceptance.sbatch), which read
// check.json through the binary instead of matching its text.
#include <cstdio>
#include <memory>
#include <string>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/report/html.hpp"
#include "report_subcommands.hpp"

namespace fb::cli {

ReportSubcommand add_report_verdict(CLI::App& report) {
  auto path = std::make_shared<std::string>();
  auto* app = report.add_subcommand(
      "verdict",
      "the verdict a check.json holds, as one line \"STATUS EXIT_CODE\" (pass 0, fail 1, error 3, ...): for "
      "scripts that act on a `fabricbench check` they did not run themselves");
  app->add_option("check", *path, "check.json of `fabricbench check`")->required();
  return {app, [path](int, char**) {
            const auto doc = report::read_check_json(*path, "report verdict");
            std::printf("%s %d\n", doc.status.c_str(), doc.exit_code);
            return int{kExitOk};
          }};
}

}  // namespace fb::cli
