// nccl-tests' table shape, so its readers find their columns where they
// expect them: one line per size, out-of-place then in-place. The time is the
// median over iterations of the slowest rank (nccl-tests prints a mean).
// It does not go through core/text_table.hpp on purpose: tools that parse
// nccl-tests output read this byte for byte, and its layout is not the
// renderer's (three head lines, the units line ending in the spaces of an
// empty #wrong column, which the renderer cuts; a "# " head two characters
// into a 12-wide size column; rows printed one size at a time).
#include <fmt/format.h>

#include <optional>

#include "fabricbench/core/sinks.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb {
namespace {

std::string half_row(const std::optional<Measurement>& m) {
  if (!m) return fmt::format(" {:>9} {:>7} {:>7} {:>6}", "-", "-", "-", "-");
  const std::string wrong = m->wrong < 0 ? "N/A" : std::to_string(m->wrong);
  return fmt::format(" {:>9.2f} {:>7.2f} {:>7.2f} {:>6}", m->time.median_us, m->algbw_gbps, m->busbw_gbps, wrong);
}

class TableSink final : public RowSink {
 public:
  explicit TableSink(std::FILE* out) : out_(out) {}

  void begin(const RunHeader& header) override {
    print("# fabricbench {}  backend {}  ranks {}  nodes {}\n", header.version, header.backend.value_or("?"),
          header.ranks, header.nodes);
  }

  void measurement(const Measurement& row) override {
    const std::string group = row.scope + "/" + row.op;
    if (group != group_) {
      group_ = group;
      print_group_header(row);
    }
    (row.in_place ? in_place_ : out_of_place_) = row;
  }

  void skip(const Skip& s) override { print("# {}\n", describe(s)); }

  void size_done() override {
    const auto& any = out_of_place_ ? out_of_place_ : in_place_;
    if (!any) return;
    const std::string redop = any->redop.empty() ? "none" : any->redop;
    print("{:>12} {:>13} {:>9} {:>7} {:>7}{}{}\n", any->bytes, any->count, any->dtype, redop, any->root,
          half_row(out_of_place_), half_row(in_place_));
    out_of_place_.reset();
    in_place_.reset();
  }

  void end(const Summary& summary) override {
    // A pointer, not a copy of the optional: the copy made gcc 12 warn (-Wmaybe-uninitialized, a false one).
    const SweepTotals::Figures* figures = summary.sweep && summary.sweep->figures ? &*summary.sweep->figures : nullptr;
    const std::int64_t wrong = figures ? figures->wrong : -1;
    print("# Out of bounds values : {}\n", wrong < 0 ? std::string("N/A (run with -c to check)")
                                                     : fmt::format("{} {}", wrong, wrong == 0 ? "OK" : "FAILED"));
    print("# Avg bus bandwidth    : {:.4f}\n", figures ? figures->avg_busbw_gbps : 0.0);
  }

 private:
  template <typename... Args>
  void print(fmt::format_string<Args...> f, Args&&... args) {
    std::fputs(fmt::format(f, std::forward<Args>(args)...).c_str(), out_);
    std::fflush(out_);
  }

  void print_group_header(const Measurement& row) {
    const std::string peers = row.peer_a >= 0 ? fmt::format("  ranks {}<->{}", row.peer_a, row.peer_b) : "";
    print("#\n# {}  scope {}  {} ranks x {} group{}  path {}{}\n", row.op, row.scope, row.nranks, row.groups,
          row.groups == 1 ? "" : "s", row.path, peers);
    print("# {:>10} {:>13} {:>9} {:>7} {:>7} {:>32} {:>32}\n", "", "", "", "", "", "out-of-place", "in-place");
    print("# {:>10} {:>13} {:>9} {:>7} {:>7} {:>9} {:>7} {:>7} {:>6} {:>9} {:>7} {:>7} {:>6}\n", "size", "count", "type",
          "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    print("# {:>10} {:>13} {:>9} {:>7} {:>7} {:>9} {:>7} {:>7} {:>6} {:>9} {:>7} {:>7} {:>6}\n", "(B)", "(elements)", "",
          "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  }

  std::FILE* out_;
  std::string group_;
  std::optional<Measurement> out_of_place_;
  std::optional<Measurement> in_place_;
};

class ProgressSink final : public RowSink {
 public:
  explicit ProgressSink(std::FILE* out) : out_(out) {}
  void begin(const RunHeader&) override {}
  void progress(const Progress& p) override {
    std::fprintf(out_, "\r\033[K[%s %s] size %zu/%zu %s", p.scope.c_str(), p.op.c_str(), p.index, p.total,
                 format_bytes(p.bytes).c_str());
    std::fflush(out_);
  }
  // Cleared before the table prints (this sink comes first in the list), so
  // rows never land on the progress line.
  void measurement(const Measurement&) override {}
  void skip(const Skip&) override { clear(); }
  void size_done() override { clear(); }
  void end(const Summary&) override { clear(); }

 private:
  void clear() {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }

  std::FILE* out_;
};

// -q: the skips alone, so a run that measured less than it was asked says why.
class SkipNoteSink final : public RowSink {
 public:
  SkipNoteSink(std::FILE* out, std::string command) : out_(out), command_(std::move(command)) {}
  void begin(const RunHeader&) override {}
  void measurement(const Measurement&) override {}
  void skip(const Skip& s) override {
    std::fputs(fmt::format("fabricbench {}: {}\n", command_, describe(s)).c_str(), out_);
    std::fflush(out_);
  }
  void end(const Summary&) override {}

 private:
  std::FILE* out_;
  std::string command_;
};

}  // namespace

std::string describe(const Skip& s) {
  if (s.op.empty()) return fmt::format("scope {} skipped: {}", s.scope, s.reason);
  if (s.bytes == 0) return fmt::format("{} {}{} skipped: {}", s.scope, s.op, s.in_place ? " in-place" : "", s.reason);
  return fmt::format("{} {} {}{} skipped: {}", s.scope, s.op, format_bytes(s.bytes), s.in_place ? " in-place" : "",
                     s.reason);
}

std::unique_ptr<RowSink> make_skip_note_sink(std::FILE* out, std::string command) {
  return std::make_unique<SkipNoteSink>(out, std::move(command));
}

std::unique_ptr<RowSink> make_table_sink(std::FILE* out) { return std::make_unique<TableSink>(out); }
std::unique_ptr<RowSink> make_progress_sink(std::FILE* out) { return std::make_unique<ProgressSink>(out); }

}  // namespace fb
