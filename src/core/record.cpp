#include "fabricbench/core/record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <type_traits>
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
  if (!m.wrong_at.empty()) {
    json at = json::array();
    for (const auto& w : m.wrong_at) at.push_back({{"rank", w.rank}, {"iteration", w.iteration}, {"elements", w.elements}});
    j["wrong_at"] = std::move(at);
  }
  if (m.pass > 0) j["pass"] = m.pass;
  if (!m.rank_mean_us.empty()) j["rank_mean_us"] = m.rank_mean_us;
  return j;
}

namespace {

// A value of exactly the type and range the schema says. The JSON library's
// own get<int>() casts 1e300 to int (undefined behaviour) and -5 to a huge
// uint64 (silently): found by tests/fuzz/record_fuzz.cpp.
template <typename T>
T as(const json& v, const char* key) {
  const auto wrong = [&] {
    return std::runtime_error(fmt::format("measurement line: '{}' has the wrong type or range ({})", key, v.dump()));
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw wrong();
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    using limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(limits::max())) throw wrong();
      return static_cast<T>(u);
    }
    if (!v.is_number_integer()) throw wrong();
    const auto i = v.get<std::int64_t>();  // negative here: unsigned values were taken above
    if (i < static_cast<std::int64_t>(limits::min())) throw wrong();
    return static_cast<T>(i);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw wrong();
    return v.get<T>();
  } else {
    if (!v.is_string()) throw wrong();
    return v.get<std::string>();
  }
}

template <typename T>
T get(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(fmt::format("measurement line has no '{}'", key));
  return as<T>(*it, key);
}

const json& array(const json& j, const char* key) {
  const json& a = j.at(key);
  if (!a.is_array()) throw std::runtime_error(fmt::format("measurement line: '{}' is not an array", key));
  return a;
}

// A text field of a line, "" when absent; another type is an error naming the line.
std::string text_field(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) return {};
  if (!it->is_string()) throw std::runtime_error(fmt::format("{}: \"{}\" is not a string ({})", where, key, it->dump()));
  return it->get<std::string>();
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
  if (j.contains("wrong_ranks"))
    for (const auto& r : array(j, "wrong_ranks")) m.wrong_ranks.push_back(as<int>(r, "wrong_ranks"));
  if (j.contains("wrong_at")) {
    for (const auto& w : array(j, "wrong_at")) {
      if (!w.is_object()) throw std::runtime_error("measurement line: 'wrong_at' holds something other than objects");
      m.wrong_at.push_back({get<int>(w, "rank"), get<std::int64_t>(w, "iteration"), get<std::int64_t>(w, "elements")});
    }
  }
  if (j.contains("pass")) m.pass = get<int>(j, "pass");
  if (j.contains("rank_mean_us"))
    for (const auto& v : array(j, "rank_mean_us")) m.rank_mean_us.push_back(as<double>(v, "rank_mean_us"));
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
  std::lock_guard lock(mutex_);
  if (!sealed_) write_locked(line);
}

bool RecordWriter::seal(const json& line) {
  std::lock_guard lock(mutex_);
  if (sealed_) return false;
  write_locked(line);
  if (fd_ >= 0) ::fsync(fd_);
  sealed_ = true;
  return true;
}

void RecordWriter::write_locked(const json& line) {
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
  std::lock_guard lock(mutex_);
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
  return parse_results(in, path);
}

Results parse_results(std::istream& in, const std::string& path) {
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
    const std::string where = fmt::format("{}:{}", path, line_no);
    const std::string type = text_field(j, "type", where);
    if (type.empty()) throw std::runtime_error(fmt::format("{}: line has no \"type\"", where));
    if (r.lines.empty()) {
      if (type != "run")
        throw std::runtime_error(fmt::format("{}:{}: the first line must be the run header, found \"{}\"", path,
                                             line_no, type));
      const std::string version = text_field(j, "schema_version", where);
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
      r.status = text_field(j, "status", where);
      if (r.status.empty()) r.status = "complete";  // 1.0 summaries had no status
      r.complete = r.status == "complete";
    }
    r.lines.push_back(std::move(j));
  }
  if (r.lines.empty()) throw std::runtime_error(fmt::format("{}: empty results file (no run header)", path));
  return r;
}

}  // namespace fb
