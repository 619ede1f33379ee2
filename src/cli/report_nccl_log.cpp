// `fabricbench report nccl-log FILE...`: read NCCL INFO logs and print, per
// communicator, the transports between ranks and a verdict per node pair
// (the parser and the verdicts: fabricbench/backends/nccl_log/). Runs alone.
#include "report_nccl_log.hpp"

#include <cstdio>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/backends/nccl_log/nccl_log_report.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

std::string read_all(const std::string& path) {
  return read_input_file("report nccl-log", path, {.stdin_ok = true});
}

}  // namespace

int report_nccl_log(const std::vector<std::string>& files, const std::string& format) {
  if (format != "text" && format != "json") throw UsageError("--format " + format + ": text or json");
  nccl_log::LogReader reader;
  std::vector<std::string> without;
  for (const auto& f : files) {
    const std::string text = read_all(f);
    const nccl_log::Log alone = nccl_log::read_log(text);
    if (alone.nccl_lines == 0) without.push_back(f);
    reader.add(text);
  }
  const nccl_log::Log log = reader.finish();
  if (log.nccl_lines == 0) {
    std::string names;
    for (const auto& f : files) names += (names.empty() ? "" : ", ") + f;
    throw UsageError(names + ": no NCCL lines; give the output of a run with NCCL_DEBUG=INFO (and NCCL_DEBUG_FILE, "
                             "if set, names where NCCL wrote it)");
  }
  for (const auto& f : without) user_log().warn("fabricbench report nccl-log: {} has no NCCL lines", f);
  if (format == "json")
    std::fputs(nccl_log::format_json_text(log, files).c_str(), stdout);
  else
    std::fputs(nccl_log::format_text(log, files).c_str(), stdout);
  return kExitOk;
}

}  // namespace fb::cli
