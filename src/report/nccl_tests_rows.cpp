// nccl-tests' printed rows as measurement lines, and the record they make.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/types.hpp"
#include "nccl_tests_parts.hpp"

namespace fb::report {

using json = nlohmann::ordered_json;

std::string nccl_version_from_code(long long code) {
  if (code <= 0) return {};
  // NCCL_VERSION(X,Y,Z): X*1000 + Y*100 + Z before 2.9, X*10000 + Y*100 + Z since.
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

namespace detail {

// The first run of [a-z_] that ends in "_perf" or "_perf_mpi" before a
// non-word character: what ([a-z_]+)_perf(?:_mpi)?\b finds, scanned by hand
// because std::regex took time quadratic in a run of letters (and a stack
// frame per letter) on a JSON args[0] of any length.
std::string binary_in(const std::string& text) {
  const auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  const auto word_char = [&](char c) { return name_char(c) || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  for (std::size_t start = 0; start < text.size();) {
    if (!name_char(text[start])) {
      ++start;
      continue;
    }
    std::size_t end = start;
    while (end < text.size() && name_char(text[end])) ++end;
    const std::string_view run(text.data() + start, end - start);
    if (end == text.size() || !word_char(text[end]))
      for (const std::string_view tail : {std::string_view("_perf"), std::string_view("_perf_mpi")})
        if (run.size() > tail.size() && run.ends_with(tail))
          return std::string(run.substr(0, run.size() - tail.size())) + "_perf";
    start = end;
  }
  return {};
}

std::string op_of_binary(const std::string& binary, const std::string& where) {
  std::string stem = binary;
  if (stem.ends_with("_perf")) stem.resize(stem.size() - 5);
  if (stem == "hypercube")
    throw UsageError(fmt::format("{}: nccl-tests' hypercube test has no fabricbench op; leave its log out", where));
  const auto op = parse_op(stem);
  return op ? std::string(name(*op)) : std::string();
}

int ranks_from_factor(const std::string& op_name, double algbw, double busbw) {
  const auto op = parse_op(op_name);
  if (!op || algbw <= 0 || busbw_factor(*op, 2) == busbw_factor(*op, 3)) return 0;  // factor 1 whatever n
  // Invert all_reduce's 2(n-1)/n or the ring ops' (n-1)/n: the nearest n,
  // if near enough for the printed digits to tell it from its neighbours.
  const double f = busbw / algbw;
  int best = 0;
  double best_error = 1e300;
  for (int n = 1; n <= 4096; ++n) {
    const double error = std::abs(busbw_factor(*op, n) - f);
    if (error < best_error) {
      best_error = error;
      best = n;
    }
  }
  return best_error <= 0.003 * std::max(f, 1e-9) || (best == 1 && f == 0) ? best : 0;
}

namespace {

// Printed with two decimals, from a time printed with two decimals under
// 100 us: a relative 3% and 0.006 GB/s cover the rounding of both.
bool agrees(double printed, double computed) { return std::abs(printed - computed) <= 0.006 + 0.03 * computed; }

Measurement measurement(const NcclTestsTable& t, const PrintedRow& row, const Printed& p, bool in_place) {
  const auto op = parse_op(t.op);
  const auto dtype = parse_dtype(row.type);
  if (!dtype)
    throw UsageError(fmt::format("{}: type '{}' is not one fabricbench knows ({})", row.where, row.type,
                                 allowed_dtypes()));
  Measurement m;
  m.op = t.op;
  m.backend = "nccl";
  m.scope = "global";  // nccl-tests runs every op over all its ranks
  m.dtype = std::string(name(*dtype));
  m.redop = row.redop == "none" || !op_desc(*op).reduces ? "" : row.redop;
  m.root = op_desc(*op).rooted ? row.root : -1;
  m.nranks = t.nranks;
  m.groups = 1;
  m.bytes = row.size;
  m.count = row.count;
  m.in_place = in_place;
  // nccl-tests prints one time per placement: the mean over its timed
  // iterations. One figure, so no spread: a stability rule skips the row.
  m.time.iterations = 1;
  m.time.min_us = m.time.median_us = m.time.mean_us = m.time.p99_us = m.time.max_us = p.time_us;
  m.algbw_gbps = p.time_us > 0 ? static_cast<double>(row.size) / p.time_us / 1e3 : 0.0;
  m.busbw_gbps = m.algbw_gbps * busbw_factor(*op, t.nranks);
  m.wrong = p.wrong ? *p.wrong : -1;
  if (p.algbw_gbps && !agrees(*p.algbw_gbps, m.algbw_gbps))
    throw UsageError(fmt::format("{}: {} algbw {} GB/s does not follow from size {} B / time {} us ({:.4g} GB/s): "
                                 "the columns are not nccl-tests' size, time and algbw",
                                 row.where, in_place ? "in-place" : "out-of-place", *p.algbw_gbps, row.size, p.time_us,
                                 m.algbw_gbps));
  if (p.busbw_gbps && !agrees(*p.busbw_gbps, m.busbw_gbps))
    throw UsageError(fmt::format("{}: {} busbw {} GB/s does not follow from algbw {:.4g} GB/s and {}'s factor for {} "
                                 "ranks ({:.4g} GB/s): the rank count is wrong; give --ranks N",
                                 row.where, in_place ? "in-place" : "out-of-place", *p.busbw_gbps, m.algbw_gbps, t.op,
                                 t.nranks, m.busbw_gbps));
  return m;
}

}  // namespace

void add_row(NcclTestsTable& table, const PrintedRow& row) {
  if (row.out_of_place.present) table.rows.push_back(measurement(table, row, row.out_of_place, false));
  if (row.in_place.present) table.rows.push_back(measurement(table, row, row.in_place, true));
}

}  // namespace detail

namespace {

json devices_json(const NcclTestsTable& t) {
  json out = json::array();
  for (const auto& d : t.devices)
    out.push_back({{"rank", d.rank}, {"host", d.host}, {"device", d.device}, {"bus_id", d.bus_id}, {"name", d.name}});
  return out;
}

json table_json(const NcclTestsTable& t) {
  json j = {{"op", t.op},         {"where", t.where},         {"binary", t.binary},
            {"args", t.args},     {"nranks", t.nranks},       {"iters", t.iters},
            {"warmup_iters", t.warmup_iters}, {"finished", t.finished}, {"rows", t.rows.size()},
            {"devices", devices_json(t)}};
  if (t.validation) j["validation"] = *t.validation;
  if (t.graph) j["graph"] = *t.graph;
  if (!t.started.empty()) j["started"] = t.started;
  if (t.out_of_bounds) j["out_of_bounds"] = *t.out_of_bounds;
  if (t.avg_busbw_gbps) j["avg_busbw_gbps"] = *t.avg_busbw_gbps;
  return j;
}

}  // namespace

ImportRecord import_record(const NcclTestsImport& import, const std::string& run_id) {
  ImportRecord r;
  RunHeader& h = r.header;
  h.command = "import";
  h.run_id = run_id;
  h.backend = "nccl";
  h.backend_version = import.nccl_version;
  // Hosts and ranks from the device lists: the largest test's ranks, nodes
  // in the order their hosts first appear.
  const NcclTestsTable* widest = nullptr;
  for (const auto& t : import.tables)
    if (!widest || t.nranks > widest->nranks) widest = &t;
  h.ranks = widest ? widest->nranks : 0;
  std::map<std::string, int> node_of;
  if (widest) {
    for (const auto& d : widest->devices) {
      const auto [it, added] = node_of.emplace(d.host, static_cast<int>(h.hosts.size()));
      if (added) {
        h.hosts.push_back(d.host);
        h.ranks_per_node.push_back(0);
      }
      ++h.ranks_per_node[static_cast<std::size_t>(it->second)];
      h.rank_node.push_back(it->second);
    }
  }
  h.nodes = h.hosts.empty() ? -1 : static_cast<int>(h.hosts.size());  // -1: the log does not say
  json tables = json::array();
  for (const auto& t : import.tables) tables.push_back(table_json(t));
  h.options = json{{"source", "nccl-tests"},
                   {"nccl_tests_version", import.nccl_tests_version},
                   {"files", import.files},
                   {"tables", std::move(tables)}};

  std::int64_t wrong = -1;
  double busbw_sum = 0;
  for (const auto& t : import.tables)
    for (Measurement m : t.rows) {
      m.run_id = run_id;
      if (m.wrong >= 0) wrong = std::max<std::int64_t>(wrong, 0) + m.wrong;
      busbw_sum += m.busbw_gbps;
      r.rows.push_back(std::move(m));
    }
  SweepTotals totals;
  totals.rows = r.rows.size();
  SweepTotals::Figures figures;
  figures.wrong = wrong;
  figures.avg_busbw_gbps = r.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(r.rows.size());
  totals.figures = figures;
  r.summary.sweep = totals;
  if (!import.failures.empty()) {
    r.summary.status = "error";
    r.summary.reason = "nccl-tests did not finish: " + import.failures.front() +
                       (import.failures.size() > 1 ? fmt::format(" (and {} more)", import.failures.size() - 1) : "");
    r.summary.exit_code = kExitRunError;
  }
  return r;
}

}  // namespace fb::report
