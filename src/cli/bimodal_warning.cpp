#include "bimodal_warning.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::cli {
namespace {

class BimodalWarningSink final : public RowSink {
 public:
  explicit BimodalWarningSink(std::FILE* out) : out_(out) {}
  void begin(const RunHeader&) override {}
  void measurement(const Measurement& row) override {
    if (row.modes)
      lines_.push_back(fmt::format("bimodal {}/{} {} {}{}: {}", row.op, row.scope, row.backend, format_bytes(row.bytes),
                                   row.in_place ? " in-place" : "", modes_text(*row.modes)));
  }
  void skip(const Skip&) override {}
  void end(const Summary&) override {
    for (const auto& l : lines_) std::fprintf(out_, "fabricbench run: warning: %s\n", l.c_str());
    if (!lines_.empty())
      std::fprintf(out_,
                   "fabricbench run: warning: iteration times in two modes are a link that flaps or a path that "
                   "alternates; the row's median is a figure no iteration had (docs/run.md)\n");
  }

 private:
  std::FILE* out_;
  std::vector<std::string> lines_;
};

}  // namespace

std::unique_ptr<RowSink> make_bimodal_warning_sink(std::FILE* out) { return std::make_unique<BimodalWarningSink>(out); }

}  // namespace fb::cli
