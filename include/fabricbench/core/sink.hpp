// Where rows go on rank 0: the record, the CSV, the table, the progress line.
// The runner calls every sink in order; a sink never talks to other ranks.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "fabricbench/core/record.hpp"

namespace fb {

// A measurement that did not run, and why (unsupported datatype, scope that
// does not apply to this layout, a size too small to split among the ranks).
struct Skip {
  std::string op;
  std::string scope;
  std::uint64_t bytes = 0;  // 0 = every size
  bool in_place = false;
  std::string reason;
};

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
  virtual void begin(const nlohmann::ordered_json& header) = 0;
  virtual void progress(const Progress&) {}
  virtual void measurement(const Measurement& row) = 0;
  // Any other record line (an `inventory` line): the record writes it as
  // it is, the other sinks ignore it.
  virtual void line(const nlohmann::ordered_json&) {}
  virtual void skip(const Skip& skip) = 0;
  // End of one size (all its placements): the record syncs to disk here.
  virtual void size_done() {}
  // A line only the record keeps (inventory, pair, check lines); it must
  // have a "type". Other sinks ignore it.
  virtual void record_line(const nlohmann::ordered_json&) {}
  virtual void end(const nlohmann::ordered_json& summary) = 0;
  // The run is being aborted (hang, lost rank, error, signal): write the
  // closing line now if this sink has one. Called from the watchdog's thread
  // while the engine's thread may be anywhere, at most once, never after
  // end(); must not block for long. The record sink adds the rows and skips
  // it wrote to `summary`.
  virtual void abort(const nlohmann::ordered_json& /*summary*/) {}
};

}  // namespace fb
