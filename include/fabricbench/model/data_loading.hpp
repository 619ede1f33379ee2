// Does data loading keep up with the step? The job reads global_batch x
// bytes_per_sample per step from its dataset, whatever the node count, so
// the rate it needs grows as the step shrinks with more nodes, while a shared
// filesystem's aggregate read often stays flat. Needed: that volume over the
// predicted step time; delivered: the aggregate read `fabricbench storage`
// measured at that node count. A pure function of both, tested without files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/model/step.hpp"

namespace fb::model {

// The best aggregate read of one target and pattern at one node count (the
// loader reads the fastest way measured: either mode, any block), page-cache
// figures left out.
struct StorageRate {
  int nodes = 0;
  double gbps = 0;
  std::string label;  // "fuse.sshfs /shared/ds, direct, 16 MiB blocks"
};
// One entry per node count measured, ascending.
std::vector<StorageRate> storage_rates(const std::vector<StorageLine>& lines, const std::string& target,
                                       const std::string& pattern);

struct DataPoint {
  int nodes = 0;
  std::string why;  // "" when judged; else why not (step not predicted, storage not measured at this count)
  double step_us = 0;
  double bytes_per_step = 0;
  double needed_gbps = 0;
  std::optional<StorageRate> shared;  // --path
  std::optional<StorageRate> local;   // --local, when measured
  bool keeps_up = false;              // the shared filesystem delivers at least what is needed
  std::string advice;                 // one sentence with the figures
};

// `points`: the scaling prediction of the workload (predict_scaling);
// `storage`: the record's storage lines. Throws fb::UsageError when the
// workload states no data: section.
std::vector<DataPoint> data_loading(const Workload& w, const std::vector<ScalePoint>& points,
                                    const std::vector<StorageLine>& storage);

}  // namespace fb::model
