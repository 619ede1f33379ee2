// `fabricbench storage` on every rank: the folders and the space check
// first (bad input stops every rank alike with one message), then each
// pattern at each node count: the first N nodes' ranks do I/O at once while
// the others wait, and rank 0 turns what every rank measured into one
// `storage` line per pattern (per node and aggregate GB/s, IOPS, latency
// percentiles).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/storage/mounts.hpp"
#include "fabricbench/storage/plan.hpp"
#include "fabricbench/storage/workspace.hpp"

namespace fb {
class ProgressBoard;
}

namespace fb::storage {

// One folder measured: --path or --local.
struct Target {
  std::string name;  // "path" or "local"
  std::string folder;
  std::string flag;  // "--path", "--local"
  std::optional<MountEntry> mount;  // rank 0's
  bool shared = false;  // every rank doing I/O uses rank 0's run folder
  std::vector<int> node_counts;
};

class StorageRunner {
 public:
  StorageRunner(const Comm& world, const NodeMap& nodes, StorageOptions options, std::string run_id);
  ~StorageRunner();
  StorageRunner(const StorageRunner&) = delete;
  StorageRunner& operator=(const StorageRunner&) = delete;

  // Collective. Checks every folder on every rank (exists, a folder,
  // writable, not read-only), makes the run and rank folders, tells which
  // ranks share a filesystem, and checks the space for what will be written
  // at once. Throws fb::UsageError alike on every rank, naming the folder.
  void prepare();
  const std::vector<Target>& targets() const { return targets_; }
  // Rows the run will produce (for the progress line).
  std::size_t planned_rows() const;

  void watch(ProgressBoard* board) { board_ = board; }
  // Collective: every pattern at every node count. Rank 0 gets each line as
  // soon as it is measured. Throws RunError on an I/O error (naming the file).
  using Row = std::function<void(const StorageLine&)>;
  void run(const Row& row);
  // Removes every file and folder made (also done by the destructor).
  void clean();

 private:
  struct Site;  // one target's workspace on this rank
  void prepare_target(Target& target, Site& site);
  void check_space(const Target& target, const Site& site) const;
  void run_target(std::size_t index, const Row& row);
  bool io_rank() const;

  Comm world_;
  NodeMap nodes_;
  StorageOptions options_;
  std::string run_id_;
  std::vector<Target> targets_;
  std::vector<std::unique_ptr<Site>> sites_;
  ProgressBoard* board_ = nullptr;
  std::int64_t step_ = 0;
};

}  // namespace fb::storage
