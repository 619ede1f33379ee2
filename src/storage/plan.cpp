#include "fabricbench/storage/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::storage {

namespace {
constexpr std::uint64_t kMaxSmallBlock = 16ull << 20;
}

void validate(const StorageOptions& o) {
  if (o.path.empty()) throw UsageError("--path is required: the folder on the filesystem to measure");
  if (!o.sequential && !o.small_files) throw UsageError("--patterns is empty: give seq, small or both");
  if (o.modes.empty()) throw UsageError("--direct: give on, off or both");
  if (o.sequential) {
    if (o.block_sizes.empty()) throw UsageError("--block-sizes is empty: give sizes such as 1M,16M");
    for (const auto b : o.block_sizes) {
      if (b < kDirectAlign || b % kDirectAlign != 0 || b > (1ull << 30))
        throw UsageError(fmt::format("--block-sizes {}: from 4 KiB to 1 GiB in whole 4 KiB (O_DIRECT needs whole "
                                     "blocks), such as 1M,16M",
                                     format_bytes(b)));
      if (o.bytes < b)
        throw UsageError(fmt::format("--bytes {} is smaller than the block size {}: give at least one block per file",
                                     format_bytes(o.bytes), format_bytes(b)));
    }
  }
  if (o.small_files) {
    if (o.files < 1 || o.files > 10'000'000) throw UsageError(fmt::format("--files {}: from 1 to 10000000", o.files));
    if (o.file_bytes < 1 || o.file_bytes > (1ull << 30))
      throw UsageError(fmt::format("--file-bytes {}: from 1 B to 1 GiB", format_bytes(o.file_bytes)));
  }
  for (const int n : o.node_counts)
    if (n < 1) throw UsageError(fmt::format("--nodes {}: node counts are whole numbers from 1", n));
}

std::vector<int> node_counts(const StorageOptions& o, int nodes) {
  std::vector<int> out;
  if (o.node_counts.empty()) {
    for (int n = 1; n < nodes; n *= 2) out.push_back(n);
    out.push_back(nodes);
    return out;
  }
  for (const int n : o.node_counts) {
    if (n > nodes)
      throw UsageError(fmt::format("--nodes {}: the job has {} node{}; measure at most that many at once", n, nodes,
                                   nodes == 1 ? "" : "s"));
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t sequential_bytes(const StorageOptions& o, std::uint64_t block) { return o.bytes / block * block; }

std::uint64_t peak_bytes_per_rank(const StorageOptions& o) {
  std::uint64_t peak = 0;
  if (o.sequential)
    for (const auto b : o.block_sizes) peak = std::max(peak, sequential_bytes(o, b));
  if (o.small_files) peak = std::max(peak, o.files * o.file_bytes);
  return peak;
}

std::uint64_t small_block_bytes(const StorageOptions& o) { return std::min(o.file_bytes, kMaxSmallBlock); }

JsonValue to_json(const StorageOptions& o) {
  nlohmann::ordered_json modes = nlohmann::ordered_json::array();
  for (const Mode m : o.modes) modes.push_back(std::string(name(m)));
  nlohmann::ordered_json patterns = nlohmann::ordered_json::array();
  if (o.sequential) patterns.push_back("seq");
  if (o.small_files) patterns.push_back("small");
  return nlohmann::ordered_json{{"path", o.path},
                                {"local", o.local},
                                {"node_counts", o.node_counts},
                                {"patterns", patterns},
                                {"block_sizes", o.block_sizes},
                                {"bytes", o.bytes},
                                {"files", o.files},
                                {"file_bytes", o.file_bytes},
                                {"modes", modes},
                                {"one_per_node", o.one_per_node},
                                {"timeout_s", o.timeout_s}};
}

}  // namespace fb::storage
