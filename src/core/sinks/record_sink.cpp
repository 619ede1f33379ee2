#include <mutex>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/sinks.hpp"

namespace fb {
namespace {

class RecordSink final : public RowSink {
 public:
  RecordSink(const std::string& path, bool overwrite, ClosingTotals totals) : totals_(totals) {
    const std::string err = writer_.open(path, overwrite);
    if (!err.empty()) throw RunError(err);
  }
  void begin(const RunHeader& header) override {
    run_id_ = header.run_id;
    writer_.write(header);
  }
  void measurement(const Measurement& row) override {
    Measurement stamped = row;
    stamped.run_id = run_id_;
    std::lock_guard lock(mutex_);
    writer_.write(stamped);
    ++rows_;
  }
  void skip(const Skip& s) override {
    std::lock_guard lock(mutex_);
    writer_.write(s);
    ++skipped_;
  }
  void size_done() override { writer_.sync(); }
  void record_line(const RecordLine& line) override {
    if (const auto* moved = std::get_if<CounterLine>(&line)) {  // stamped with the row it follows
      CounterLine stamped = *moved;
      std::lock_guard lock(mutex_);
      stamped.run_id = run_id_;
      stamped.row = rows_ > 0 ? rows_ - 1 : 0;
      writer_.write(stamped);
      return;
    }
    writer_.write(line);
  }
  void end(const Summary& summary) override { writer_.seal(summary); }
  void abort(const Summary& summary) override {
    // Counted here, not by the engine (whose thread may be blocked): exactly
    // the lines that are in the file before the closing one.
    std::lock_guard lock(mutex_);
    Summary closing = summary;
    if (totals_ == ClosingTotals::sweep) closing.sweep = SweepTotals{rows_, skipped_, std::nullopt};
    writer_.seal(closing);
  }
  std::string error() const override { return writer_.error(); }

 private:
  ClosingTotals totals_;
  std::mutex mutex_;  // a row and its count go together
  RecordWriter writer_;
  std::string run_id_;
  std::size_t rows_ = 0;
  std::size_t skipped_ = 0;
};

}  // namespace

std::unique_ptr<RowSink> make_record_sink(const std::string& path, bool overwrite, ClosingTotals totals) {
  return std::make_unique<RecordSink>(path, overwrite, totals);
}

}  // namespace fb
