// nccl-tests' text output: the lines a *_perf binary prints, read in the
// order it prints them (github.com/NVIDIA/nccl-tests, src/common.cu):
//   # Collective test starting: all_reduce_perf      (newer versions)
//   # nThread 1 nGpus 1 minBytes 8 ... warmup iters: 5 iters: 20 ... validation: 1 graph: 0
//   #  Rank  0 Group  0 Pid 556 on vm device  0 [0x06] NVIDIA H200
//   #       size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong
//   #        (B)  (elements)                (us)  (GB/s)  (GB/s)        (us)  (GB/s)  (GB/s)
//            8      2  float    sum    -1  5.49   0.00   0.00      0  5.30   0.00   0.00      0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 12.3456
// The column heads are read, not assumed, so older layouts (no root column,
// an "error" column) read too; a layout with other columns is refused,
// naming its line. Anything else in a log (NCCL INFO lines, the launcher's
// own output) is passed over.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/foreign_text.hpp"
#include "nccl_tests_parts.hpp"

namespace fb::report {
namespace {

using detail::Printed;
using detail::PrintedRow;

std::vector<std::string> tokens(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// mpirun --tag-output's "[1,0]<stdout>:", srun --label's "0: ".
std::string without_prefix(const std::string& line) {
  static const std::regex mpirun(R"(^\[\d+,\d+\]<std(?:out|err)>:\s?)");
  static const std::regex srun(R"(^\s*\d+: )");
  std::smatch m;
  if (std::regex_search(line, m, mpirun)) return m.suffix().str();
  if (std::regex_search(line, m, srun)) return m.suffix().str();
  return line;
}

enum class Column { size, count, type, redop, root, time, algbw, busbw, wrong, error };

struct Layout {
  std::vector<std::pair<Column, int>> columns;  // what, and which placement (0 out-of-place, 1 in-place)
  int placements = 0;
};

// The column heads, or nullopt when the line is not a heads line at all.
std::optional<Layout> read_heads(const std::string& body, const std::string& where, const std::string& line) {
  const auto words = tokens(body);
  const auto has = [&](const char* w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  if (!has("time") || !(has("size") || has("bytes")) || !(has("busbw") || has("algbw"))) return std::nullopt;
  static const std::vector<std::pair<std::string, Column>> kNames{
      {"size", Column::size},    {"count", Column::count}, {"type", Column::type},   {"redop", Column::redop},
      {"root", Column::root},    {"time", Column::time},   {"algbw", Column::algbw}, {"busbw", Column::busbw},
      {"#wrong", Column::wrong}, {"error", Column::error}};
  Layout l;
  int placement = -1;
  for (const auto& w : words) {
    auto it = std::find_if(kNames.begin(), kNames.end(), [&](const auto& n) { return n.first == w; });
    if (it == kNames.end())
      throw UsageError(
          fmt::format("{}: column '{}' is not one of nccl-tests' (size, count, type, redop, root, time, "
                      "algbw, busbw, #wrong): an unknown table layout: '{}'",
                      where, w, line));
    if (it->second == Column::time) ++placement;
    const bool figure = it->second >= Column::time;
    if (figure && placement < 0)
      throw UsageError(fmt::format("{}: '{}' before any 'time' column: an unknown table layout: '{}'", where, w, line));
    l.columns.emplace_back(it->second, figure ? placement : -1);
  }
  l.placements = placement + 1;
  for (Column need : {Column::size, Column::count, Column::type})
    if (std::none_of(l.columns.begin(), l.columns.end(), [&](const auto& c) { return c.first == need; }))
      throw UsageError(fmt::format("{}: no size, count or type column: an unknown table layout: '{}'", where, line));
  if (l.placements < 1 || l.placements > 2)
    throw UsageError(
        fmt::format("{}: {} groups of time columns (nccl-tests prints out-of-place and in-place): an "
                    "unknown table layout: '{}'",
                    where, l.placements, line));
  return l;
}

template <typename T>
T number(const std::string& text, const std::string& where, const char* what) {
  char* end = nullptr;
  T value{};
  if constexpr (std::is_floating_point_v<T>) {
    value = std::strtod(text.c_str(), &end);
  } else if constexpr (std::is_signed_v<T>) {
    value = static_cast<T>(std::strtoll(text.c_str(), &end, 10));
  } else {
    value = text.starts_with('-') ? T{} : static_cast<T>(std::strtoull(text.c_str(), &end, 10));
  }
  if (text.empty() || end != text.c_str() + text.size())
    throw UsageError(fmt::format("{}: {} '{}' is not a number", where, what, text));
  return value;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Reads one file's lines into tables. A table opens at its column heads and
// closes at "# Avg bus bandwidth" (finished), or unfinished at whatever
// comes first of: the next test, a failure line, another test binary named,
// the end of the file.
class TextReader {
 public:
  TextReader(const std::string& name, const ImportOptions& options, NcclTestsImport& out)
      : name_(name), options_(options), out_(out), file_binary_(detail::binary_in(name)) {}

  void line(const std::string& raw, std::size_t number) {
    const std::string text = without_prefix(raw);
    const std::string where = fmt::format("{}:{}", name_, number);
    if (first_line_.empty() && !trimmed(text).empty()) first_line_ = trimmed(text).substr(0, 120);
    versions(text);
    if (std::regex_search(text, failure_re())) {
      close();
      out_.failures.push_back(fmt::format("{}: {}", where, trimmed(text)));
      return;
    }
    const auto words = tokens(text);
    if (words.empty()) return;
    const bool is_comment = words.front().starts_with("#");
    if (const std::string binary = detail::binary_in(text); !binary.empty() && !is_rank_line(text)) {
      close();
      pending_binary_ = binary;
      pending_line_ = trimmed(text);
    }
    if (is_comment) {
      comment(text, where);
    } else if (table_ && all_digits(words.front())) {
      row(words, where, text);
    }
  }

  void finish(std::size_t lines) {
    close();
    if (!seen_heads_)
      throw UsageError(
          fmt::format("{}:{}: no nccl-tests results table in this file (the '#  size  count  type ...  "
                      "time  algbw  busbw' heads), and it is not nccl-tests' -J JSON{}",
                      name_, lines ? 1 : 0, first_line_.empty() ? "" : ": '" + first_line_ + "'"));
  }

 private:
  static const std::regex& failure_re() {
    static const std::regex re(R"(Test (?:NCCL |CUDA )?failure)");
    return re;
  }

  static bool is_rank_line(const std::string& text) {
    static const std::regex rank(R"(^#\s*Rank\s+\d+)");
    return std::regex_search(text, rank);
  }

  static std::string trimmed(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r");
    const auto b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  }

  void versions(const std::string& text) {
    static const std::regex tests_version(R"(nccl-tests version (\S+))");
    static const std::regex library(R"(nccl-library=(\d+))");
    static const std::regex nccl(R"(NCCL version (\d+\.\d+\.\d+))");
    std::smatch m;
    if (std::regex_search(text, m, tests_version)) set_version(out_.nccl_tests_version, m[1].str(), "nccl-tests");
    if (std::regex_search(text, m, library))
      set_version(out_.nccl_version, nccl_version_from_code(std::atoll(m[1].str().c_str())), "NCCL");
    if (std::regex_search(text, m, nccl)) set_version(out_.nccl_version, m[1].str(), "NCCL");
  }

  void set_version(std::string& slot, const std::string& value, const char* what) {
    if (slot.empty()) {
      slot = value;
    } else if (slot != value && !noted_versions_) {
      out_.notes.push_back(
          fmt::format("{}: {} version {} here and {} elsewhere: the record says {}", name_, what, value, slot, slot));
      noted_versions_ = true;
    }
  }

  void comment(const std::string& text, const std::string& where) {
    static const std::regex nthread(R"(nThread\s+(\d+)\s+nGpus\s+(\d+))");
    static const std::regex rank(
        R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)");
    static const std::regex iters(R"((?:^|\s)iters:\s*(\d+))");
    static const std::regex warmup(R"(warmup iters:\s*(\d+))");
    static const std::regex validation(R"(validation:\s*(\d+))");
    static const std::regex graph(R"(graph:\s*(\d+))");
    static const std::regex oob(R"(Out of bounds values\s*:\s*(\d+))");
    static const std::regex avg(R"(Avg bus bandwidth\s*:\s*([0-9.eE+-]+))");
    std::smatch m;
    if (std::regex_search(text, m, nthread)) {
      close();
      test_ = NcclTestsTable{};
      if (std::regex_search(text, m, warmup)) test_.warmup_iters = std::atoi(m[1].str().c_str());
      if (std::regex_search(text, m, iters)) test_.iters = std::atoi(m[1].str().c_str());
      if (std::regex_search(text, m, validation)) test_.validation = m[1].str() != "0";
      if (std::regex_search(text, m, graph)) test_.graph = m[1].str() != "0";
    } else if (std::regex_search(text, m, rank)) {
      close();
      const int r = std::atoi(m[1].str().c_str());
      if (std::none_of(test_.devices.begin(), test_.devices.end(), [&](const auto& d) { return d.rank == r; }))
        test_.devices.push_back({r, m[2].str(), std::atoi(m[3].str().c_str()), m[4].str(), trimmed(m[5].str())});
    } else if (std::regex_search(text, m, oob)) {
      if (table_) table_->out_of_bounds = std::atoll(m[1].str().c_str());
    } else if (std::regex_search(text, m, avg)) {
      if (table_) {
        table_->avg_busbw_gbps = std::atof(m[1].str().c_str());
        table_->finished = true;
      }
      close();
    } else if (table_ && !units_seen_ && text.find("(B)") != std::string::npos) {
      units(text, where);
    } else if (auto heads = read_heads(text.substr(text.find('#') + 1), where, trimmed(text))) {
      close();
      open(std::move(*heads), where);
    }
  }

  void open(Layout layout, const std::string& where) {
    layout_ = std::move(layout);
    table_ = test_;
    table_->where = where;
    table_->binary = pending_binary_.empty() ? file_binary_ : pending_binary_;
    if (!pending_binary_.empty()) table_->args = args_after(pending_line_, pending_binary_);
    pending_binary_.clear();
    seen_heads_ = true;
    units_seen_ = false;
  }

  void units(const std::string& text, const std::string& where) {
    std::size_t us = 0;
    for (auto at = text.find("(us)"); at != std::string::npos; at = text.find("(us)", at + 1)) ++us;
    if (us != static_cast<std::size_t>(layout_.placements) || text.find("(GB/s)") == std::string::npos)
      throw UsageError(
          fmt::format("{}: the units line does not say time in us and bandwidth in GB/s for each "
                      "placement: an unknown table layout: '{}'",
                      where, trimmed(text)));
    units_seen_ = true;
  }

  void row(const std::vector<std::string>& words, const std::string& where, const std::string& text) {
    if (!units_seen_)
      throw UsageError(
          fmt::format("{}: a row before the units line '(B) (elements) ... (us) (GB/s)': an unknown table "
                      "layout: '{}'",
                      where, trimmed(text)));
    if (words.size() != layout_.columns.size())
      throw UsageError(fmt::format("{}: {} fields where the heads name {} (a cut or garbled row): '{}'", where,
                                   words.size(), layout_.columns.size(), trimmed(text)));
    PrintedRow r;
    r.where = where;
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto [column, placement] = layout_.columns[i];
      const std::string& w = words[i];
      Printed& p = placement == 1 ? r.in_place : r.out_of_place;
      const bool na = w == "N/A";
      switch (column) {
        case Column::size:
          r.size = number<std::uint64_t>(w, where, "size");
          break;
        case Column::count:
          r.count = number<std::uint64_t>(w, where, "count");
          break;
        case Column::type:
          r.type = w;
          break;
        case Column::redop:
          r.redop = w;
          break;
        case Column::root:
          r.root = number<int>(w, where, "root");
          break;
        case Column::time:
          p.present = !na;
          if (!na) p.time_us = number<double>(w, where, "time");
          break;
        case Column::algbw:
          if (!na) p.algbw_gbps = number<double>(w, where, "algbw");
          break;
        case Column::busbw:
          if (!na) p.busbw_gbps = number<double>(w, where, "busbw");
          break;
        case Column::wrong:
          if (!na) p.wrong = number<std::int64_t>(w, where, "#wrong");
          break;
        case Column::error:
          // Older nccl-tests printed the largest error, not a count of wrong
          // elements: the row stays "not checked".
          if (!na) (void)number<double>(w, where, "error");
          old_error_column_ = true;
          break;
      }
    }
    rows_.push_back(std::move(r));
  }

  // The open table, if it has rows, becomes measurements; one without its
  // closing lines is kept and named as unfinished.
  void close() {
    if (!table_) return;
    NcclTestsTable t = std::move(*table_);
    table_.reset();
    auto rows = std::move(rows_);
    rows_.clear();
    if (rows.empty()) return;
    t.op = resolve_op(t, rows.front().where);
    t.nranks = resolve_ranks(t, rows);
    std::size_t zero = 0;
    for (const auto& r : rows) {
      if (r.size == 0) {
        ++zero;
        continue;
      }
      detail::add_row(t, r);
    }
    if (zero)
      out_.notes.push_back(
          fmt::format("{}: left out {} row(s) of size 0 (nothing moved: no figure to compare)", t.where, zero));
    if (old_error_column_)
      out_.notes.push_back(
          fmt::format("{}: this nccl-tests prints the largest error, not a count of wrong "
                      "elements: the rows say 'not checked' (wrong -1)",
                      t.where));
    old_error_column_ = false;
    if (!t.finished)
      out_.failures.push_back(
          fmt::format("{}: the {} table ends without nccl-tests' closing lines (the test failed "
                      "or the log was cut): its {} rows are kept",
                      t.where, t.op, t.rows.size()));
    out_.tables.push_back(std::move(t));
  }

  std::string resolve_op(const NcclTestsTable& t, const std::string& row_where) const {
    if (!t.binary.empty()) {
      const std::string op = detail::op_of_binary(t.binary, t.where);
      if (!op.empty()) return op;
    }
    if (!options_.op.empty()) return options_.op;
    throw UsageError(
        fmt::format("{}: which nccl-tests test this table is the log does not say (no '# Collective test "
                    "starting' line, no *_perf command line before it, and the file name names none; "
                    "first row at {}): give --op",
                    t.where, row_where));
  }

  static std::vector<std::string> args_after(const std::string& line, const std::string& binary) {
    std::vector<std::string> out;
    bool after = false;
    for (const auto& w : tokens(line)) {
      if (after) out.push_back(w);
      if (w.ends_with(binary)) after = true;
    }
    return out;
  }

  int resolve_ranks(const NcclTestsTable& t, const std::vector<PrintedRow>& rows) {
    if (!t.devices.empty()) {
      int top = 0;
      for (const auto& d : t.devices) top = std::max(top, d.rank + 1);
      if (top != static_cast<int>(t.devices.size()))
        throw UsageError(fmt::format("{}: the log lists {} ranks but numbers them up to {}: a rank line is missing",
                                     t.where, t.devices.size(), top - 1));
      return top;
    }
    if (options_.ranks > 0) return options_.ranks;
    // The largest row says most: its busbw/algbw ratio is the op's factor.
    const PrintedRow* big = nullptr;
    for (const auto& r : rows)
      if (r.out_of_place.algbw_gbps && r.out_of_place.busbw_gbps && (!big || r.size > big->size)) big = &r;
    const int n =
        big ? detail::ranks_from_factor(t.op, *big->out_of_place.algbw_gbps, *big->out_of_place.busbw_gbps) : 0;
    if (n > 0) {
      out_.notes.push_back(
          fmt::format("{}: the log lists no ranks: {} ranks from the busbw/algbw ratio of the row "
                      "at {} (give --ranks to say otherwise)",
                      t.where, n, big->where));
      return n;
    }
    throw UsageError(
        fmt::format("{}: the log lists no ranks ('#  Rank  0 ... device ...' lines) and {}'s busbw "
                    "does not tell their number: give --ranks N",
                    t.where, t.op));
  }

  std::string name_;
  const ImportOptions& options_;
  NcclTestsImport& out_;
  std::string file_binary_;
  std::string pending_binary_, pending_line_;
  std::string first_line_;
  NcclTestsTable test_;                  // what the test's header lines said
  std::optional<NcclTestsTable> table_;  // the open table
  Layout layout_;
  std::vector<PrintedRow> rows_;
  bool units_seen_ = false;
  bool seen_heads_ = false;
  bool old_error_column_ = false;
  bool noted_versions_ = false;
};

}  // namespace

NcclTestsImport parse_nccl_tests_text(std::istream& in, const std::string& name, const ImportOptions& options) {
  NcclTestsImport out;
  out.files.push_back(name);
  TextReader reader(name, options, out);
  std::string line;
  std::size_t number = 0;
  LongLines long_lines;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (long_lines.keep(line, number)) reader.line(line, number);
  }
  reader.finish(number);
  if (long_lines.count() > 0) out.notes.push_back(long_lines.note(name));
  return out;
}

}  // namespace fb::report
