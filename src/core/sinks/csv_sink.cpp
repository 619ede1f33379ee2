#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "fabricbench/core/sinks.hpp"

namespace fb {

std::string csv_header() {
  return "op,backend,scope,path,dtype,redop,root,nranks,groups,bytes,count,in_place,iterations,time_min_us,"
         "time_median_us,time_mean_us,time_p99_us,time_max_us,time_stddev_us,algbw_gbps,busbw_gbps,slowest_rank,"
         "slowest_rank_lag_us,slowest_rank_mean_us,wrong";
}

std::string csv_line(const Measurement& m) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},{},"
                     "{:.3f},{:.3f},{}",
                     m.op, m.backend, m.scope, m.path, m.dtype, m.redop, m.root, m.nranks, m.groups, m.bytes, m.count,
                     m.in_place ? 1 : 0, m.time.iterations, m.time.min_us, m.time.median_us, m.time.mean_us,
                     m.time.p99_us, m.time.max_us, m.time.stddev_us, m.algbw_gbps, m.busbw_gbps, m.slowest_rank,
                     m.slowest_rank_lag_us, m.slowest_rank_mean_us, m.wrong);
}

namespace {

class CsvSink final : public RowSink {
 public:
  explicit CsvSink(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
    if (!file_) throw std::runtime_error(fmt::format("cannot write CSV file '{}': {}", path, std::strerror(errno)));
    std::fprintf(file_, "%s\n", csv_header().c_str());
  }
  ~CsvSink() override {
    if (file_) std::fclose(file_);
  }
  void begin(const nlohmann::ordered_json&) override {}
  void measurement(const Measurement& row) override { std::fprintf(file_, "%s\n", csv_line(row).c_str()); }
  void skip(const Skip&) override {}
  void size_done() override { std::fflush(file_); }
  void end(const nlohmann::ordered_json&) override { std::fflush(file_); }

 private:
  std::FILE* file_;
};

}  // namespace

std::unique_ptr<RowSink> make_csv_sink(const std::string& path) { return std::make_unique<CsvSink>(path); }

}  // namespace fb
