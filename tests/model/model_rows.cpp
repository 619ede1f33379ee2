#include "model_rows.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "rows.hpp"

namespace fb::test {

Measurement model_row(const std::string& op, const std::string& scope, int nranks, std::uint64_t bytes,
                      double median_us, double spread, int groups) {
  Measurement m = measurement_row(op, scope, nranks, bytes, median_us, spread);
  m.groups = groups;
  return m;
}

std::vector<Measurement> alpha_beta_rows(const std::string& op, const std::string& scope, int nranks,
                                         double alpha_us, double beta_gbps, double noise, std::uint64_t min_bytes,
                                         std::uint64_t max_bytes, int groups) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  std::vector<Measurement> rows;
  for (std::uint64_t b = min_bytes; b <= max_bytes; b *= 2) {
    const double t = (alpha_us + static_cast<double>(b) / (beta_gbps * 1e3)) * (1 + jitter(rng));
    rows.push_back(model_row(op, scope, nranks, b, t, 0.05, groups));
  }
  return rows;
}

void write_results(const std::string& path, const std::vector<Measurement>& rows, int nodes) {
  RecordWriter w;
  if (const std::string error = w.open(path, true); !error.empty()) throw std::runtime_error(error);
  RunHeader header;
  header.command = "run";
  header.nodes = nodes;
  w.write(header);
  for (const auto& m : rows) w.write(m);
  Summary summary;
  summary.sweep = SweepTotals{rows.size(), 0, std::nullopt};
  w.seal(summary);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Results make_results(const std::vector<Measurement>& rows, int nodes) {
  Results r;
  r.path = "memory.jsonl";
  r.header.schema_version = schema_version();
  r.header.command = "run";
  r.header.nodes = nodes;
  r.line_count = 1 + rows.size();
  r.measurements = rows;
  r.complete = true;
  return r;
}

}  // namespace fb::test
