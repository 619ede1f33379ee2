// Where rows go on rank 0: the record, the CSV, the table, the progress line.
// The runner calls every sink in order; a sink never talks to other ranks.
// Lines are the record's typed lines (record_lines.hpp).
#pragma once

#include <string>

#include "fabricbench/core/record_lines.hpp"

namespace fb {

struct Progress {
  std::string op;
  std::string scope;
  std::size_t index = 0;  // size k of n
  std::size_t total = 0;
  std::uint64_t bytes = 0;
};

class RowSink {
 public:
  virtual ~RowSink() = default;
  // The header: sinks that write rows stamp its run_id on each.
  virtual void begin(const RunHeader& header) = 0;
  virtual void progress(const Progress&) {}
  virtual void measurement(const Measurement& row) = 0;
  virtual void skip(const Skip& skip) = 0;
  // End of one size (all its placements): the record syncs to disk here.
  virtual void size_done() {}
  // A line only the record keeps (inventory, pair, node, finding, check
  // lines). Other sinks ignore it.
  virtual void record_line(const RecordLine&) {}
  virtual void end(const Summary& summary) = 0;
  // The run is being aborted (hang, lost rank, error, signal): write the
  // closing line now if this sink has one. Called from the watchdog's thread
  // while the engine's thread may be anywhere, at most once, never after
  // end(); must not block for long, must not throw. The record sink adds the
  // rows and skips it wrote to `summary`.
  virtual void abort(const Summary& /*summary*/) {}
  // "" while this sink's writes succeeded, else the first failure (file and
  // errno): the command then ends with exit 3 naming it.
  [[nodiscard]] virtual std::string error() const { return {}; }
};

}  // namespace fb
