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
  void measurement(const Measurement& row) override { writer_.write(to_json(row)); }
  void line(const nlohmann::ordered_json& line) override { writer_.write(line); }
  void skip(const Skip& s) override {
    nlohmann::ordered_json j = {{"type", "skip"}, {"op", s.op},   {"scope", s.scope},
                        {"bytes", s.bytes}, {"in_place", s.in_place}, {"reason", s.reason}};
    writer_.write(j);
  }
  void size_done() override { writer_.sync(); }
  void record_line(const nlohmann::ordered_json& line) override { writer_.write(line); }
  void end(const nlohmann::ordered_json& summary) override {
    writer_.write(summary);
    writer_.sync();
  }

 private:
  RecordWriter writer_;
};

}  // namespace

std::unique_ptr<RowSink> make_record_sink(const std::string& path) { return std::make_unique<RecordSink>(path); }

}  // namespace fb
