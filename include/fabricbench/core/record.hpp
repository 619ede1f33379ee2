// The results record: JSON Lines, one object per line, each written whole
// as soon as it exists, so a crash or a kill keeps every finished line and
// never leaves half of one. The lines themselves: record_lines.hpp. Schema:
// docs/results-schema.md.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/output_file.hpp"
#include "fabricbench/core/record_lines.hpp"

namespace fb {

// Major.minor. Readers accept any minor of their major and reject other majors.
inline constexpr int kSchemaMajor = 1;
inline constexpr int kSchemaMinor = 21;  // 1.1: inventory lines, copy ops, options device/graph, gemm records;
                                         // 1.2: pair, node and finding lines;
                                         // 1.3: wrong_at, pass, summary status/reason/report (watchdog);
                                         // 1.4: run_id, check lines' optional, every summary's keys alike;
                                         // 1.5: measurements' time_ci_low/high_us, stopped_by; option median_ci;
                                         //      storage records and lines; diagnose records and diagnosis lines;
                                         // 1.6: measurements' time_samples (iterations timed together);
                                         // 1.7: header's simulated (made through the test doubles);
                                         // 1.8: inventory GPUs' compute_mode, mig, processes (who else uses it);
                                         //      storage lines' io_engine, queue_depth, sync, fallocate;
                                         //      option cap_min_iters (a cap may end a size before a default -n)
                                         // 1.9: inventory lines' environment (NCCL_*, UCX_*, OMPI_MCA_*, nccl.conf)
                                         // 1.10: inventory GPUs' fabric (multi-node NVLink domain: cluster
                                         //       UUID, clique, registration state; issue 37)
                                         // 1.11: counters lines (error counters that moved during a row)
                                         // 1.12: header's counters (where they were read, or off)
                                         // 1.13: counters lines' exercised (did the row use the device)
                                         // 1.14: scope domain (NVLink domain across hosts; issue 37):
                                         //       measurements' and skips' scope, inventory paths' scope
                                         // 1.15: option in_place_where_out_refused (--placement one)
                                         // 1.16: step's non-GEMM parts (planned_non_gemm_us, compute_us ...)
                                         // 1.17: step's products (the GPU step's layer products by shape)
                                         // 1.18: option cap_bytes_per_rank (the bytes cap, 4 GiB; 1 GiB before)
                                         // 1.19: header mpi_thread_level (MPI_THREAD_SINGLE with --timeout 0)
                                         // 1.20: option timing_group_span_us: host backends time iterations
                                         //       under it in groups too (time_samples on their rows)
                                         // 1.21: round trips (pingpong) timed on the rank that
                                         //       starts and ends them, not the slower of the two
std::string schema_version();

// One line of a record as RecordWriter writes it, newline included: its JSON
// on one line, a byte that is not UTF-8 replaced. `report lines` prints a
// record's lines so.
std::string line_text(const RecordLine& line);
std::string line_text(const Summary& summary);

// Appends lines to a file (output_file.hpp: no link followed, no file
// replaced without `overwrite`). Thread-safe: the watchdog's thread may
// seal() the record while the engine's thread is writing rows; after seal()
// nothing more is written, so the closing line is always the last. Never
// throws on a write: the first failure (a full disk) stops the record where
// its last whole line ends and is kept in error(), for the command to end
// with exit 3 naming the file; the record then has no summary, which readers
// report as incomplete.
class RecordWriter {
 public:
  RecordWriter() : file_("results file") {}
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // "" on success, else the problem.
  [[nodiscard]] std::string open(const std::string& path, bool overwrite);
  const std::string& path() const { return file_.path(); }
  // Writes one line whole; ignored once sealed or after a failure.
  void write(const RecordLine& line);
  // fsync: called at the end of each size so finished rows reach the disk.
  void sync();
  // Writes the closing line, syncs, and ignores every later write. False
  // when already sealed (the first closing line stands) or the write failed.
  bool seal(const Summary& summary) noexcept;
  // "" while every write succeeded, else the first failure (file and errno).
  [[nodiscard]] std::string error() const;

 private:
  bool write_locked(const std::string& text);
  LineFile file_;
  mutable std::mutex mutex_;
  bool sealed_ = false;
};

struct Results {
  std::string path;
  // Only the typed lines below leave core: a reader of a record sees the keys
  // the schema names, checked, never the raw JSON (tests read the file's
  // lines themselves where the text on disk is what they check).
  std::size_t line_count = 0;  // whole lines read, the header included
  // Each kind of line, typed (record_lines.hpp), in file order.
  RunHeader header;
  std::vector<InventoryLine> inventory;
  std::vector<Measurement> measurements;
  std::vector<Skip> skips;
  std::vector<PairLine> pairs;
  std::vector<NodeLine> nodes;
  std::vector<FindingLine> findings;
  std::vector<CheckLine> checks;
  std::vector<GemmLine> gemms;
  std::vector<StepLine> steps;
  std::vector<StepModelLine> step_models;
  std::vector<StorageLine> storage;
  std::vector<DiagnosisLine> diagnoses;
  std::vector<CounterLine> counters;  // since 1.11
  std::optional<Summary> summary;
  // The summary's status: "complete", or why the run ended early ("hang",
  // "rank_lost", "error", "killed"); "incomplete" when there is no summary
  // (rank 0 itself was killed, or the record was cut).
  std::string status = "incomplete";
  bool complete = false;  // status == "complete"
  // The last line was cut (what a crash or a full disk leaves): every whole
  // line before it is here; `truncated_note` says which line was dropped.
  bool truncated = false;
  std::string truncated_note;
};

// Reads a results file. Throws std::runtime_error with the path and line
// number for unreadable files, malformed lines (but the last, see
// Results::truncated), a missing header or another major schema version.
// A cut last line is noted on stderr and dropped.
Results read_results(const std::string& path);
// The same from a stream, without the note; `name` stands for the path in messages.
Results parse_results(std::istream& in, const std::string& name);

// Throws UsageError when `r` was made through the test doubles of the GPU
// backends (RunHeader::simulated): what judges or prices a network refuses
// simulated figures as a measurement.
void refuse_simulated(const Results& r, const std::string& path);

}  // namespace fb
