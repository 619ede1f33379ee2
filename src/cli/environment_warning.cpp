#include "environment_warning.hpp"

#include <fmt/format.h>

#include <variant>
#include <vector>

#include "fabricbench/core/environment_audit.hpp"

namespace fb::cli {
namespace {

class EnvironmentWarningSink final : public RowSink {
 public:
  explicit EnvironmentWarningSink(std::FILE* out) : out_(out) {}
  void begin(const RunHeader&) override {}
  void measurement(const Measurement&) override {}
  void skip(const Skip&) override {}
  void record_line(const RecordLine& line) override {
    if (const auto* inv = std::get_if<InventoryLine>(&line)) inventory_.push_back(*inv);
  }
  void end(const Summary&) override {
    for (const auto& f : audit_environment(inventory_))
      std::fprintf(out_, "fabricbench run: warning: environment: %s\n", finding_text(f).c_str());
  }

 private:
  std::FILE* out_;
  std::vector<InventoryLine> inventory_;
};

}  // namespace

std::unique_ptr<RowSink> make_environment_warning_sink(std::FILE* out) {
  return std::make_unique<EnvironmentWarningSink>(out);
}

}  // namespace fb::cli
