// One `storage` line from what every rank doing I/O measured: a pure
// function, so its arithmetic is tested without MPI.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/storage/patterns.hpp"

namespace fb::storage {

struct RankResult {
  int rank = 0;
  int node = 0;  // node index (NodeMap)
  RankFigures figures;
};

// What the line says about the run, the same for each of a target's lines.
struct LineContext {
  std::string run_id;
  std::string target;
  std::string path;
  std::string fs_type, fs_kind, mount_source, mount_options;
  bool shared = false;
  Mode mode = Mode::buffered;
  std::uint64_t block_bytes = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t files = 0;
};

// `results` holds the ranks that did I/O (at least one); `node_hosts` every
// node's host name by node index.
StorageLine make_line(const LineContext& context, Pattern pattern, const std::vector<RankResult>& results,
                      const std::vector<std::string>& node_hosts);

}  // namespace fb::storage
