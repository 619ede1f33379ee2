#include "curve_warning.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>
#include <vector>

#include "fabricbench/accept/smoothness.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::cli {
namespace {

using OpScope = std::tuple<std::string, std::string, std::string>;  // op, scope, backend: one warning each

// One line per op and scope: the first curve's cliff in full, the others
// (in-place, another datatype) by where they start and how far they fall.
std::string warning_of(const std::vector<const accept::CurveCliff*>& cliffs) {
  const auto& first = *cliffs.front();
  std::string line = fmt::format("cliff in {}: {}", first.curve, first.where);
  const std::string shared = fmt::format("{}/{} {} ", first.at->op, first.at->scope, first.at->backend);
  for (std::size_t i = 1; i < cliffs.size(); ++i) {
    std::string curve = cliffs[i]->curve;  // "all_reduce/global mpi in-place": the part that differs
    if (curve.starts_with(shared)) curve.erase(0, shared.size());
    line += fmt::format("; {}: at {}, {:.0f}x", curve, format_bytes(cliffs[i]->at->bytes), cliffs[i]->cliff.factor());
  }
  return line + "; " + first.ranks_text;
}

class CurveWarningSink final : public RowSink {
 public:
  explicit CurveWarningSink(std::FILE* out) : out_(out) {}
  void begin(const RunHeader& header) override { header_ = header; }
  void measurement(const Measurement& row) override { rows_.push_back(row); }
  void skip(const Skip&) override {}
  void end(const Summary&) override {
    std::vector<const Measurement*> rows;
    for (const auto& r : rows_) rows.push_back(&r);
    const auto cliffs = accept::find_cliffs(rows, header_);
    std::map<OpScope, std::vector<const accept::CurveCliff*>> by_op_scope;
    for (const auto& c : cliffs) by_op_scope[{c.at->op, c.at->scope, c.at->backend}].push_back(&c);
    for (const auto& [key, group] : by_op_scope)
      std::fprintf(out_, "fabricbench run: warning: %s\n", warning_of(group).c_str());
    if (!cliffs.empty())
      std::fprintf(out_,
                   "fabricbench run: warning: a cliff is %s; `fabricbench model` prices a link measured here from the "
                   "sizes below it (docs/run.md)\n",
                   std::string(accept::kCliffMeaning).c_str());
  }

 private:
  std::FILE* out_;
  RunHeader header_;
  std::vector<Measurement> rows_;
};

}  // namespace

std::unique_ptr<RowSink> make_curve_warning_sink(std::FILE* out) { return std::make_unique<CurveWarningSink>(out); }

}  // namespace fb::cli
