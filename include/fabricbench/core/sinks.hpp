// The sinks a run writes to on rank 0.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/core/sink.hpp"

namespace fb {

// JSON Lines record (docs/results-schema.md). Lines are written as they come
// and the file is fsync'ed at the end of every size.
std::unique_ptr<RowSink> make_record_sink(const std::string& path);
// One CSV row per measurement, the record's measurement keys as columns.
std::unique_ptr<RowSink> make_csv_sink(const std::string& path);
// The nccl-tests-shaped table: out-of-place and in-place side by side.
std::unique_ptr<RowSink> make_table_sink(std::FILE* out);
// "[all_reduce global] 12/24 64 KiB" rewritten in place on a terminal.
std::unique_ptr<RowSink> make_progress_sink(std::FILE* out);

// Fans out to several sinks in order.
class SinkList final : public RowSink {
 public:
  void add(std::unique_ptr<RowSink> sink) { sinks_.push_back(std::move(sink)); }
  void begin(const nlohmann::ordered_json& header) override;
  void progress(const Progress& p) override;
  void measurement(const Measurement& row) override;
  void line(const nlohmann::ordered_json& line) override;
  void skip(const Skip& skip) override;
  void size_done() override;
  void record_line(const nlohmann::ordered_json& line) override;
  void end(const nlohmann::ordered_json& summary) override;
  void abort(const nlohmann::ordered_json& summary) override;

 private:
  std::vector<std::unique_ptr<RowSink>> sinks_;
};

// The CSV header, and a measurement as a CSV line (no newline).
std::string csv_header();
std::string csv_line(const Measurement& m);

}  // namespace fb
