// A RowSink that keeps every row and skip, for tests of the engine.
#pragma once

#include <vector>

#include "fabricbench/core/sink.hpp"

namespace fb::test {

class CaptureSink final : public RowSink {
 public:
  void begin(const RunHeader&) override {}
  void measurement(const Measurement& row) override { rows.push_back(row); }
  void skip(const Skip& s) override { skips.push_back(s); }
  void record_line(const RecordLine& line) override { lines.push_back(line); }
  void end(const Summary&) override {}
  std::vector<Measurement> rows;
  std::vector<Skip> skips;
  std::vector<RecordLine> lines;  // the typed lines besides rows and skips (counters...)
};

}  // namespace fb::test
