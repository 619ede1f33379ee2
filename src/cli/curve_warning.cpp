#include "curve_warning.hpp"

#include <vector>

#include "fabricbench/accept/smoothness.hpp"

namespace fb::cli {
namespace {

constexpr std::size_t kMaxWarnings = 10;

class CurveWarningSink final : public RowSink {
 public:
  explicit CurveWarningSink(std::FILE* out) : out_(out) {}
  void begin(const RunHeader& header) override { header_ = header; }
  void measurement(const Measurement& row) override { rows_.push_back(row); }
  void skip(const Skip&) override {}
  void end(const Summary&) override {
    std::vector<const Measurement*> rows;
    for (const auto& r : rows_) rows.push_back(&r);
    const auto breaks = accept::find_curve_breaks(rows, accept::kRunWarningLimits, header_);
    for (std::size_t i = 0; i < breaks.size() && i < kMaxWarnings; ++i)
      std::fprintf(out_, "fabricbench run: warning: curve not smooth: %s\n", breaks[i].detail.c_str());
    if (breaks.size() > kMaxWarnings)
      std::fprintf(out_, "fabricbench run: warning: and %zu more sizes off their curves\n",
                   breaks.size() - kMaxWarnings);
    if (!breaks.empty())
      std::fprintf(out_, "fabricbench run: warning: a smoothness rule in `fabricbench check` fails on these "
                         "(docs/acceptance.md)\n");
  }

 private:
  std::FILE* out_;
  RunHeader header_;
  std::vector<Measurement> rows_;
};

}  // namespace

std::unique_ptr<RowSink> make_curve_warning_sink(std::FILE* out) { return std::make_unique<CurveWarningSink>(out); }

}  // namespace fb::cli
