// `fabricbench report nccl-log`: the transports NCCL used, from its INFO logs.
#pragma once

#include <string>
#include <vector>

namespace fb::cli {

// Prints the report of `files` ("-" = stdin) on stdout; UsageError when a
// file cannot be read or none has NCCL lines.
int report_nccl_log(const std::vector<std::string>& files, const std::string& format);

}  // namespace fb::cli
