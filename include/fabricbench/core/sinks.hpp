// The sinks a run writes to on rank 0.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/core/sink.hpp"

namespace fb {

// What a record closed early (abort) counts into its closing line: a sweep's
// rows and skips as written (run, check), or nothing of its own (pairs, step,
// storage, gemm: their lines are not rows).
enum class ClosingTotals { sweep, none };

// JSON Lines record (docs/results-schema.md). Lines are written as they come
// and the file is fsync'ed at the end of every size. Throws RunError when the
// file cannot be opened.
std::unique_ptr<RowSink> make_record_sink(const std::string& path, bool overwrite,
                                          ClosingTotals totals = ClosingTotals::sweep);
// One CSV row per measurement, the record's measurement keys as columns.
std::unique_ptr<RowSink> make_csv_sink(const std::string& path, bool overwrite);
// The nccl-tests-shaped table: out-of-place and in-place side by side.
std::unique_ptr<RowSink> make_table_sink(std::FILE* out);
// "[all_reduce global] 12/24 64 KiB" rewritten in place on a terminal.
std::unique_ptr<RowSink> make_progress_sink(std::FILE* out);
// One line per skip, "fabricbench run: skipped ...: reason": what the table
// would have said, for -q (on stderr).
std::unique_ptr<RowSink> make_skip_note_sink(std::FILE* out, std::string command);

// The words of a skip: "scope inter skipped: one node".
std::string describe(const Skip& skip);

// Fans out to several sinks in order.
class SinkList final : public RowSink {
 public:
  void add(std::unique_ptr<RowSink> sink) { sinks_.push_back(std::move(sink)); }
  void begin(const RunHeader& header) override;
  void progress(const Progress& p) override;
  void measurement(const Measurement& row) override;
  void skip(const Skip& skip) override;
  void size_done() override;
  void record_line(const RecordLine& line) override;
  void end(const Summary& summary) override;
  void abort(const Summary& summary) override;
  // The first sink's failure, "" when none.
  [[nodiscard]] std::string error() const override;

 private:
  std::vector<std::unique_ptr<RowSink>> sinks_;
};

// The CSV header, and a measurement as CSV fields (csv.hpp writes them).
std::vector<std::string> csv_header();
std::vector<std::string> csv_fields(const Measurement& m);

}  // namespace fb
