// The results record: JSON Lines, one object per line, each written with a
// single write() as soon as it exists, so a crash or a kill keeps every
// finished line and never leaves half of one. Schema: docs/results-schema.md.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/stats.hpp"

namespace fb {

// Major.minor. Readers accept any minor of their major and reject other majors.
inline constexpr int kSchemaMajor = 1;
inline constexpr int kSchemaMinor = 3;  // 1.1: inventory lines, copy ops, options device/graph, gemm records;
                                        // 1.2: pair, node and finding lines;
                                        // 1.3: wrong_at, pass, summary status/reason/report (watchdog)
std::string schema_version();

// Wrong elements one rank saw in one verified iteration (--check all).
struct WrongAt {
  int rank = 0;                 // world rank
  std::int64_t iteration = 0;   // timed iteration, from 1
  std::int64_t elements = 0;
  bool operator==(const WrongAt&) const = default;
};
// At most this many WrongAt entries per row (the totals stay exact).
inline constexpr std::size_t kMaxWrongAt = 256;

// One measured row: an op at one size, scope and placement.
struct Measurement {
  std::string op;
  std::string backend;
  std::string scope;
  std::string path;
  std::string dtype;
  std::string redop;  // "" when the op does not reduce
  int root = -1;      // -1 when the op has no root
  int nranks = 0;     // ranks in each group that ran the op
  int groups = 1;     // groups that ran it at once (nodes for intra, rails for rail)
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  bool in_place = false;
  int peer_a = -1;  // point-to-point ops: the two ranks (group ranks)
  int peer_b = -1;
  TimeStats time;   // per op, slowest rank of each iteration
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  // The rank the others waited for most (largest mean lateness entering the
  // op, world rank), how late it was on average, and its own mean time.
  int slowest_rank = -1;
  double slowest_rank_lag_us = 0;
  double slowest_rank_mean_us = 0;
  std::int64_t wrong = -1;  // wrong elements over all ranks; -1 = not checked
  std::vector<int> wrong_ranks;  // world ranks that had wrong elements
  std::vector<WrongAt> wrong_at;  // --check all: where, by rank and iteration (capped at kMaxWrongAt)
  int pass = 0;  // --duration: the sweep's pass, from 1; 0 = a single-pass run
  // Each world rank's mean time per op (-1: sat out), when the run asked for
  // it (RunOptions::per_rank_times): finds the node or rail that lags.
  std::vector<double> rank_mean_us;
};

nlohmann::ordered_json to_json(const Measurement& m);
// Throws std::runtime_error naming the missing or mistyped key.
Measurement measurement_from_json(const nlohmann::ordered_json& j);

// Appends lines to a file. open() fails with a message naming the path.
// Thread-safe: the watchdog's thread may seal() the record while the
// engine's thread is writing rows; after seal() nothing more is written, so
// the closing line is always the last.
class RecordWriter {
 public:
  RecordWriter() = default;
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Opens (truncates) `path`. Returns an error text, or "" on success.
  std::string open(const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // Writes one line (a "type" key must be in it) with one write(); ignored once sealed.
  void write(const nlohmann::ordered_json& line);
  // fsync: called at the end of each size so finished rows reach the disk.
  void sync();
  // Writes the closing line, syncs, and ignores every later write. False
  // when already sealed (the first closing line stands).
  bool seal(const nlohmann::ordered_json& line);

 private:
  void write_locked(const nlohmann::ordered_json& line);
  int fd_ = -1;
  std::string path_;
  std::mutex mutex_;
  bool sealed_ = false;
};

// Checks that `path` can be created or truncated without doing it: the folder
// exists and is writable, and the file (if present) is writable. "" when fine.
std::string check_writable(const std::string& path, const std::string& flag);

struct Results {
  std::string path;
  std::vector<nlohmann::ordered_json> lines;  // every line, in order; lines[0] is the run header
  const nlohmann::ordered_json& run() const { return lines.front(); }
  std::vector<Measurement> measurements;
  // The summary's status: "complete", or why the run ended early ("hang",
  // "rank_lost", "error", "killed"); "incomplete" when there is no summary
  // (rank 0 itself was killed, or the record was cut).
  std::string status = "incomplete";
  bool complete = false;  // status == "complete"
};

// Reads a results file. Throws std::runtime_error with the path and line
// number for unreadable files, malformed lines, a missing header or another
// major schema version.
Results read_results(const std::string& path);
// The same from a stream; `name` stands for the path in messages.
Results parse_results(std::istream& in, const std::string& name);

}  // namespace fb
