#include <fmt/format.h>

#include "fabricbench/core/csv.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sinks.hpp"

namespace fb {

std::vector<std::string> csv_header() {
  return {"op",          "backend",        "scope",        "path",        "dtype",       "redop",
          "root",        "nranks",         "groups",       "bytes",       "count",       "in_place",
          "iterations",  "time_min_us",    "time_median_us", "time_mean_us", "time_p99_us", "time_max_us",
          "time_stddev_us", "algbw_gbps",  "busbw_gbps",   "slowest_rank", "slowest_rank_lag_us",
          "slowest_rank_mean_us", "wrong", "run_id"};
}

std::vector<std::string> csv_fields(const Measurement& m) {
  const auto f3 = [](double x) { return fmt::format("{:.3f}", x); };
  const auto f4 = [](double x) { return fmt::format("{:.4f}", x); };
  return {m.op,
          m.backend,
          m.scope,
          m.path,
          m.dtype,
          m.redop,
          std::to_string(m.root),
          std::to_string(m.nranks),
          std::to_string(m.groups),
          std::to_string(m.bytes),
          std::to_string(m.count),
          m.in_place ? "1" : "0",
          std::to_string(m.time.iterations),
          f3(m.time.min_us),
          f3(m.time.median_us),
          f3(m.time.mean_us),
          f3(m.time.p99_us),
          f3(m.time.max_us),
          f3(m.time.stddev_us),
          f4(m.algbw_gbps),
          f4(m.busbw_gbps),
          std::to_string(m.slowest_rank),
          f3(m.slowest_rank_lag_us),
          f3(m.slowest_rank_mean_us),
          std::to_string(m.wrong),
          m.run_id};
}

namespace {

class CsvSink final : public RowSink {
 public:
  CsvSink(const std::string& path, bool overwrite) {
    if (auto err = csv_.open(path, overwrite, csv_header()); !err.empty()) throw RunError(err);
  }
  void begin(const RunHeader& header) override { run_id_ = header.run_id; }
  void measurement(const Measurement& row) override {
    Measurement stamped = row;
    stamped.run_id = run_id_;
    csv_.write_row(csv_fields(stamped));
  }
  void skip(const Skip&) override {}
  void size_done() override { csv_.sync(); }
  void end(const Summary&) override { csv_.sync(); }
  std::string error() const override { return csv_.error(); }

 private:
  CsvWriter csv_;
  std::string run_id_;
};

}  // namespace

std::unique_ptr<RowSink> make_csv_sink(const std::string& path, bool overwrite) {
  return std::make_unique<CsvSink>(path, overwrite);
}

}  // namespace fb
