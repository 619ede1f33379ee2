// What `fabricbench storage` measures: the patterns, sizes and modes, at
// which node counts, and how much space that needs at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricbench/core/json_value.hpp"

#include "fabricbench/storage/patterns.hpp"

namespace fb::storage {

struct StorageOptions {
  std::string path;   // --path: the shared filesystem's folder
  std::string local;  // --local: a node-local folder measured beside it ("" = none)
  std::vector<int> node_counts;  // --nodes; empty = 1, 2, 4 ... and every node
  bool sequential = true;   // seq_write and seq_read
  bool small_files = true;  // small_write and small_read
  std::vector<std::uint64_t> block_sizes{1ull << 20, 16ull << 20};
  std::uint64_t bytes = 1ull << 30;  // per rank: the sequential file
  std::uint64_t files = 1024;        // per rank
  std::uint64_t file_bytes = 128ull << 10;
  std::vector<Mode> modes{Mode::direct, Mode::buffered};
  bool one_per_node = false;  // only each node's first rank does I/O
  double timeout_s = -1;      // the watchdog's (run_options.hpp)
};

// Throws fb::UsageError naming the flag and what is allowed.
void validate(const StorageOptions& options);

// The node counts measured on `nodes` nodes: --nodes as given (each 1..nodes),
// or 1, 2, 4 ... below `nodes`, then `nodes`. Throws UsageError.
std::vector<int> node_counts(const StorageOptions& options, int nodes);

// The bytes one rank holds on the filesystem at once: its sequential file or
// its small files, whichever is larger.
std::uint64_t peak_bytes_per_rank(const StorageOptions& options);

// The block small files are read and written in: the whole file, up to 16 MiB.
std::uint64_t small_block_bytes(const StorageOptions& options);
// The sequential file's size at `block`: --bytes in whole blocks.
std::uint64_t sequential_bytes(const StorageOptions& options, std::uint64_t block);

// The options as a JSON object for the record header.
JsonValue to_json(const StorageOptions& options);

}  // namespace fb::storage
