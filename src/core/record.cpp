#include "fabricbench/core/record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include <fmt/format.h>

namespace fb {

using json = nlohmann::ordered_json;

std::string schema_version() { return fmt::format("{}.{}", kSchemaMajor, kSchemaMinor); }

json to_json(const Measurement& m) {
  json j = {
      {"type", "measurement"},
      {"op", m.op},
      {"backend", m.backend},
      {"scope", m.scope},
      {"path", m.path},
      {"dtype", m.dtype},
      {"redop", m.redop},
      {"root", m.root},
      {"nranks", m.nranks},
      {"groups", m.groups},
      {"bytes", m.bytes},
      {"count", m.count},
      {"in_place", m.in_place},
      {"iterations", m.time.iterations},
      {"time_min_us", m.time.min_us},
      {"time_median_us", m.time.median_us},
      {"time_mean_us", m.time.mean_us},
      {"time_p99_us", m.time.p99_us},
      {"time_max_us", m.time.max_us},
      {"time_stddev_us", m.time.stddev_us},
      {"algbw_gbps", m.algbw_gbps},
      {"busbw_gbps", m.busbw_gbps},
      {"slowest_rank", m.slowest_rank},
      {"slowest_rank_lag_us", m.slowest_rank_lag_us},
      {"slowest_rank_mean_us", m.slowest_rank_mean_us},
      {"wrong", m.wrong},
  };
  if (m.peer_a >= 0) {
    j["peer_a"] = m.peer_a;
    j["peer_b"] = m.peer_b;
  }
  if (!m.wrong_ranks.empty()) j["wrong_ranks"] = m.wrong_ranks;
  if (!m.rank_mean_us.empty()) j["rank_mean_us"] = m.rank_mean_us;
  return j;
}

namespace {

template <typename T>
T get(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(fmt::format("measurement line has no '{}'", key));
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(fmt::format("measurement line: '{}' has the wrong type ({})", key, it->dump()));
  }
}

}  // namespace

Measurement measurement_from_json(const json& j) {
  Measurement m;
  m.op = get<std::string>(j, "op");
  m.backend = get<std::string>(j, "backend");
  m.scope = get<std::string>(j, "scope");
  m.path = get<std::string>(j, "path");
  m.dtype = get<std::string>(j, "dtype");
  m.redop = get<std::string>(j, "redop");
  m.root = get<int>(j, "root");
  m.nranks = get<int>(j, "nranks");
  m.groups = get<int>(j, "groups");
  m.bytes = get<std::uint64_t>(j, "bytes");
  m.count = get<std::uint64_t>(j, "count");
  m.in_place = get<bool>(j, "in_place");
  m.time.iterations = get<std::size_t>(j, "iterations");
  m.time.min_us = get<double>(j, "time_min_us");
  m.time.median_us = get<double>(j, "time_median_us");
  m.time.mean_us = get<double>(j, "time_mean_us");
  m.time.p99_us = get<double>(j, "time_p99_us");
  m.time.max_us = get<double>(j, "time_max_us");
  m.time.stddev_us = get<double>(j, "time_stddev_us");
  m.algbw_gbps = get<double>(j, "algbw_gbps");
  m.busbw_gbps = get<double>(j, "busbw_gbps");
  m.slowest_rank = get<int>(j, "slowest_rank");
  m.slowest_rank_lag_us = get<double>(j, "slowest_rank_lag_us");
  m.slowest_rank_mean_us = get<double>(j, "slowest_rank_mean_us");
  m.wrong = get<std::int64_t>(j, "wrong");
  if (j.contains("peer_a")) {
    m.peer_a = get<int>(j, "peer_a");
    m.peer_b = get<int>(j, "peer_b");
  }
  if (j.contains("wrong_ranks")) m.wrong_ranks = get<std::vector<int>>(j, "wrong_ranks");
  if (j.contains("rank_mean_us")) m.rank_mean_us = get<std::vector<double>>(j, "rank_mean_us");
  return m;
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

std::string RecordWriter::open(const std::string& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return fmt::format("cannot write results file '{}': {}", path, std::strerror(errno));
  path_ = path;
  return {};
}

void RecordWriter::write(const json& line) {
  if (fd_ < 0) return;
  std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
  text += '\n';
  // One write() per line: with O_APPEND the line lands whole or not at all
  // (short writes happen only on full disks; then the rest is retried).
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("writing results file '{}': {}", path_, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

void RecordWriter::sync() {
  if (fd_ >= 0) ::fsync(fd_);
}

std::string check_writable(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) return fmt::format("{} '{}' is a folder; give a file name inside it", flag, path);
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    return fmt::format("{} '{}': the folder '{}' does not exist; create it or choose another path", flag, path,
                       folder.string());
  if (fs::exists(p, ec)) {
    if (::access(path.c_str(), W_OK) != 0)
      return fmt::format("{} '{}' is not writable: {}", flag, path, std::strerror(errno));
  } else if (::access(folder.c_str(), W_OK) != 0) {
    return fmt::format("{} '{}': cannot create files in '{}': {}", flag, path, folder.string(), std::strerror(errno));
  }
  return {};
}

Results read_results(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read results file '{}': {}", path, std::strerror(errno)));
  Results r;
  r.path = path;
  std::string text;
  std::size_t line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (text.empty()) continue;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw std::runtime_error(fmt::format("{}:{}: not a JSON object{}", path, line_no,
                                           in.eof() ? " (the last line is incomplete: the run was cut off)" : ""));
    const auto type = j.value("type", std::string());
    if (type.empty()) throw std::runtime_error(fmt::format("{}:{}: line has no \"type\"", path, line_no));
    if (r.lines.empty()) {
      if (type != "run")
        throw std::runtime_error(fmt::format("{}:{}: the first line must be the run header, found \"{}\"", path,
                                             line_no, type));
      const auto version = j.value("schema_version", std::string());
      int major = -1;
      if (std::sscanf(version.c_str(), "%d.", &major) != 1 || major != kSchemaMajor)
        throw std::runtime_error(fmt::format("{}: schema version '{}' is not supported (this fabricbench reads "
                                             "{}.x); use the fabricbench version that wrote it",
                                             path, version, kSchemaMajor));
    } else if (type == "measurement") {
      try {
        r.measurements.push_back(measurement_from_json(j));
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("{}:{}: {}", path, line_no, e.what()));
      }
    } else if (type == "summary") {
      r.complete = true;
    }
    r.lines.push_back(std::move(j));
  }
  if (r.lines.empty()) throw std::runtime_error(fmt::format("{}: empty results file (no run header)", path));
  return r;
}

}  // namespace fb
