#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fabricbench/core/sinks.hpp"

namespace fb {
namespace {

class RecordSink final : public RowSink {
 public:
  explicit RecordSink(const std::string& path) {
    const std::string err = writer_.open(path);
    if (!err.empty()) throw std::runtime_error(err);
  }
  void begin(const nlohmann::ordered_json& header) override { writer_.write(header); }
  void measurement(const Measurement& row) override {
    const auto line = to_json(row);
    std::lock_guard lock(mutex_);
    writer_.write(line);
    ++rows_;
  }
  void line(const nlohmann::ordered_json& line) override { writer_.write(line); }
  void skip(const Skip& s) override {
    nlohmann::ordered_json j = {{"type", "skip"}, {"op", s.op},   {"scope", s.scope},
                        {"bytes", s.bytes}, {"in_place", s.in_place}, {"reason", s.reason}};
    std::lock_guard lock(mutex_);
    writer_.write(j);
    ++skipped_;
  }
  void size_done() override { writer_.sync(); }
  void record_line(const nlohmann::ordered_json& line) override { writer_.write(line); }
  void end(const nlohmann::ordered_json& summary) override { writer_.seal(summary); }
  void abort(const nlohmann::ordered_json& summary) override {
    // Counted here, not by the engine (whose thread may be blocked): exactly
    // the lines that are in the file before the closing one.
    std::lock_guard lock(mutex_);
    nlohmann::ordered_json closing = summary;
    closing["rows"] = rows_;
    closing["skipped"] = skipped_;
    writer_.seal(closing);
  }

 private:
  std::mutex mutex_;  // a row and its count go together
  RecordWriter writer_;
  std::size_t rows_ = 0;
  std::size_t skipped_ = 0;
};

}  // namespace

std::unique_ptr<RowSink> make_record_sink(const std::string& path) { return std::make_unique<RecordSink>(path); }

}  // namespace fb
