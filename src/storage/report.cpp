#include "fabricbench/storage/report.hpp"

#include <fmt/format.h>

#include <set>

#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/text_table.hpp"

namespace fb::storage {
namespace {

// "1 MiB" -> "1M", for a narrow column.
std::string short_bytes(std::uint64_t b) {
  const char* units = "BKMGT";
  int u = 0;
  while (u < 4 && b >= 1024 && b % 1024 == 0) b /= 1024, ++u;
  return u == 0 ? fmt::format("{}", b) : fmt::format("{}{}", b, units[u]);
}

std::string number(double x) {
  return x >= 100 ? fmt::format("{:.0f}", x) : x >= 10 ? fmt::format("{:.1f}", x) : fmt::format("{:.3f}", x);
}

}  // namespace

std::string describe_target(const Target& t, int nodes) {
  const std::string fs = t.mount ? describe(*t.mount) : std::string("filesystem unknown");
  const std::string sharing =
      t.shared ? (nodes > 1 ? fmt::format("one filesystem for all {} nodes", nodes) : "one node")
               : "not shared: some nodes see a filesystem of their own there (aggregate = the sum of separate ones)";
  return fmt::format("# {} {}: {}; {}\n", t.flag, t.folder, fs, sharing);
}

namespace {

// Rows stream as each pattern finishes, so widths are fixed, not measured.
const std::vector<TextColumn>& columns() {
  static const std::vector<TextColumn> kColumns = [] {
    const std::vector<std::pair<const char*, std::size_t>> heads{
        {"target", 6},    {"pattern", 12},   {"mode", 9},    {"block", 6},    {"file", 6},
        {"cache", 9},     {"nodes", 6},      {"ranks", 6},   {"agg GB/s", 10}, {"node min", 10},
        {"IOPS", 10},     {"p50 us", 10},    {"p99 us", 10}, {"max us", 10}};
    std::vector<TextColumn> out;
    for (const auto& [head, width] : heads)
      out.push_back({.head = head, .align = Align::right, .min_width = width, .gap = " "});
    return out;
  }();
  return kColumns;
}

}  // namespace

std::string table_header() { return render_head_line(columns(), "#"); }

std::string table_row(const StorageLine& l) {
  return render_row_line(columns(), " ",
                         {l.target, l.pattern, l.mode, short_bytes(l.block_bytes), short_bytes(l.file_bytes), l.cache,
                          std::to_string(l.nodes), std::to_string(l.ranks), number(l.aggregate_gbps),
                          number(l.node_min_gbps), number(l.iops), number(l.latency_p50_us),
                          number(l.latency_p99_us), number(l.latency_max_us)});
}

std::string table_notes(const std::vector<StorageLine>& lines) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& l : lines) {
    if (l.note.empty() || !seen.insert(l.target + l.mode + l.note).second) continue;
    out += fmt::format("# {} {}: {}\n", l.target, l.mode, l.note);
  }
  return out;
}

std::vector<std::string> csv_header() {
  return {"run_id",     "target",      "path",    "fs_type",        "shared",         "pattern",
          "mode",       "o_direct",    "cache",   "block_bytes",    "file_bytes",     "files",
          "nodes",      "ranks",       "bytes",   "ops",            "elapsed_us",     "aggregate_gbps",
          "iops",       "node_min_gbps", "latency_p50_us", "latency_p99_us", "latency_max_us", "note"};
}

std::vector<std::string> csv_fields(const StorageLine& l) {
  const auto f = [](double x) { return fmt::format("{:.6g}", x); };
  return {l.run_id,
          l.target,
          l.path,
          l.fs_type,
          l.shared ? "true" : "false",
          l.pattern,
          l.mode,
          l.o_direct ? "true" : "false",
          l.cache,
          std::to_string(l.block_bytes),
          std::to_string(l.file_bytes),
          std::to_string(l.files),
          std::to_string(l.nodes),
          std::to_string(l.ranks),
          std::to_string(l.bytes),
          std::to_string(l.ops),
          f(l.elapsed_us),
          f(l.aggregate_gbps),
          f(l.iops),
          f(l.node_min_gbps),
          f(l.latency_p50_us),
          f(l.latency_p99_us),
          f(l.latency_max_us),
          l.note};
}

}  // namespace fb::storage
