// The record's lines as JSON, both ways: the one place their keys are spelt
// (docs/results-schema.md; tests/unit/record_lines_test.cpp holds the two
// together).
#include "fabricbench/core/record_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

using json = nlohmann::ordered_json;

JsonValue::JsonValue(const json& value) : value_(value.is_null() ? nullptr : std::make_shared<const json>(value)) {}

bool JsonValue::is_null() const { return !value_; }

const json& JsonValue::get() const {
  static const json null;
  return value_ ? *value_ : null;
}

namespace {

// Reads the keys of one line, naming its kind in every error.
class Reader {
 public:
  Reader(const json& j, const char* kind) : j_(j), kind_(kind) {
    if (!j.is_object()) throw std::runtime_error(fmt::format("{} line is not a JSON object", kind));
  }

  // A value of exactly the type and range the schema says. The JSON library's
  // own get<int>() casts 1e300 to int (undefined behaviour) and -5 to a huge
  // uint64 (silently): found by tests/fuzz/record_fuzz.cpp.
  template <typename T>
  T as(const json& v, const char* key) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) throw wrong(key, v);
      return v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      using limits = std::numeric_limits<T>;
      if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(limits::max())) throw wrong(key, v);
        return static_cast<T>(u);
      }
      if (!v.is_number_integer()) throw wrong(key, v);
      const auto i = v.get<std::int64_t>();  // negative here: unsigned values were taken above
      if (i < static_cast<std::int64_t>(limits::min())) throw wrong(key, v);
      return static_cast<T>(i);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) throw wrong(key, v);
      return v.get<T>();
    } else {
      if (!v.is_string()) throw wrong(key, v);
      return v.get<std::string>();
    }
  }

  // A key every line of the kind has had since it exists.
  template <typename T>
  T need(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) throw std::runtime_error(fmt::format("{} line has no '{}'", kind_, key));
    return as<T>(*it, key);
  }
  // A key older or hand-made lines may lack: `fallback` then.
  template <typename T>
  T take(const char* key, T fallback = T{}) const {
    const auto it = j_.find(key);
    return it == j_.end() ? fallback : as<T>(*it, key);
  }
  // Absent or null: nullopt.
  template <typename T>
  std::optional<T> maybe(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    return as<T>(*it, key);
  }
  template <typename T>
  std::vector<T> list(const char* key) const {
    std::vector<T> out;
    for (const auto& v : array(key)) out.push_back(as<T>(v, key));
    return out;
  }
  // The array at `key` (empty when absent).
  const json& array(const char* key) const {
    static const json empty = json::array();
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return empty;
    if (!it->is_array()) throw std::runtime_error(fmt::format("{} line: '{}' is not an array", kind_, key));
    return *it;
  }
  // The object at `key`, read as a nested line.
  Reader object(const json& v, const char* key) const {
    if (!v.is_object()) throw std::runtime_error(fmt::format("{} line: '{}' holds something other than objects", kind_, key));
    return Reader(v, kind_);
  }
  JsonValue value(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() ? JsonValue() : JsonValue(*it);
  }
  bool has(const char* key) const { return j_.contains(key); }

 private:
  std::runtime_error wrong(const char* key, const json& v) const {
    return std::runtime_error(fmt::format("{} line: '{}' has the wrong type or range ({})", kind_, key, v.dump()));
  }
  const json& j_;
  const char* kind_;
};

json optional_number(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

// A row's or a pair's two modes (core/modes.hpp); `op` names a pair's measurement.
json modes_json(const TwoModes& m, const std::string& op) {
  json j = json::object();
  if (!op.empty()) j["op"] = op;
  j["low_us"] = m.low_us;
  j["low_share"] = m.low_share;
  j["high_us"] = m.high_us;
  j["high_share"] = 1 - m.low_share;
  j["separation"] = m.separation;
  return j;
}

TwoModes modes_from(const Reader& r) {
  return {r.need<double>("low_us"), r.need<double>("high_us"), r.need<double>("low_share"),
          r.need<double>("separation")};
}

}  // namespace

// ---- run ---------------------------------------------------------------------

json to_json(const RunHeader& h) {
  json j = {{"type", "run"},
            {"schema_version", schema_version()},
            {"command", h.command},
            {"version", h.version},
            {"argv", h.argv},
            {"start_time", h.start_time},
            {"run_id", h.run_id},
            {"ranks", h.ranks},
            {"nodes", h.nodes},
            {"hosts", h.hosts},
            {"ranks_per_node", h.ranks_per_node},
            {"rank_node", h.rank_node},
            {"mpi_library", h.mpi_library}};
  if (h.build)
    j["build"] = {{"version", h.build->version},         {"git_commit", h.build->git_commit},
                  {"git_dirty", h.build->git_dirty},     {"build_type", h.build->build_type},
                  {"compiler", h.build->compiler},       {"mpi_library", h.build->mpi_library},
                  {"cuda_built", h.build->cuda_built},   {"nccl_built", h.build->nccl_built}};
  if (h.backend) j["backend"] = *h.backend;
  if (h.backend_version) j["backend_version"] = *h.backend_version;
  if (h.simulated) j["simulated"] = true;
  if (!h.options.is_null()) j["options"] = h.options.get();
  if (h.profile) j["profile"] = {{"name", h.profile->name}, {"path", h.profile->path}, {"source", h.profile->source}};
  if (h.sweeps) {
    json sweeps = json::array();
    for (const auto& s : *h.sweeps) sweeps.push_back({{"name", s.name}, {"options", s.options.get()}});
    j["sweeps"] = std::move(sweeps);
  }
  if (h.pairs)
    j["pairs"] = {{"size_bytes", h.pairs->size_bytes},
                  {"iters", h.pairs->iters},
                  {"time_budget_s", h.pairs->time_budget_s},
                  {"rails", h.pairs->rails}};
  return j;
}

RunHeader header_from_json(const json& j) {
  const Reader r(j, "run header");
  RunHeader h;
  h.schema_version = r.need<std::string>("schema_version");
  h.command = r.take<std::string>("command", "run");
  h.version = r.take<std::string>("version");
  h.argv = r.list<std::string>("argv");
  h.start_time = r.take<std::string>("start_time");
  h.run_id = r.take<std::string>("run_id");
  h.ranks = r.take<int>("ranks", -1);
  h.nodes = r.take<int>("nodes", -1);
  h.hosts = r.list<std::string>("hosts");
  h.ranks_per_node = r.list<int>("ranks_per_node");
  h.rank_node = r.list<int>("rank_node");
  h.mpi_library = r.take<std::string>("mpi_library");
  if (const auto it = j.find("build"); it != j.end()) {
    const Reader b = r.object(*it, "build");
    h.build = BuildRef{b.take<std::string>("version"),    b.take<std::string>("git_commit"),
                       b.take<bool>("git_dirty", false),  b.take<std::string>("build_type"),
                       b.take<std::string>("compiler"),   b.take<std::string>("mpi_library"),
                       b.take<std::string>("cuda_built"), b.take<std::string>("nccl_built")};
  }
  h.backend = r.maybe<std::string>("backend");
  h.backend_version = r.maybe<std::string>("backend_version");
  h.simulated = r.take<bool>("simulated", false);
  h.options = r.value("options");
  if (const auto it = j.find("profile"); it != j.end()) {
    const Reader p = r.object(*it, "profile");
    h.profile = ProfileRef{p.take<std::string>("name"), p.take<std::string>("path"), p.take<std::string>("source")};
  }
  if (r.has("sweeps")) {
    h.sweeps.emplace();
    for (const auto& s : r.array("sweeps")) {
      const Reader sweep = r.object(s, "sweeps");
      h.sweeps->push_back({sweep.take<std::string>("name"), sweep.value("options")});
    }
  }
  if (const auto it = j.find("pairs"); it != j.end()) {
    const Reader p = r.object(*it, "pairs");
    h.pairs = PairsPlanRef{p.take<std::uint64_t>("size_bytes"), p.take<int>("iters"), p.take<double>("time_budget_s"),
                           p.take<bool>("rails")};
  }
  return h;
}

// ---- inventory -----------------------------------------------------------------

namespace {

json path_json(const InventoryPath& p) {
  json j = {{"scope", p.scope}, {"class", p.cls}, {"peak_gbps", optional_number(p.peak_gbps)}, {"basis", p.basis}};
  if (!p.peak_gbps) j["unknown_reason"] = p.unknown_reason;
  return j;
}

}  // namespace

json to_json(const InventoryLine& l) {
  json j = {{"type", "inventory"}, {"rank", l.rank}, {"host", l.host}, {"node", l.node}, {"local_rank", l.local_rank}};
  // topo's keys in topo's order, the typed ones in their place.
  static const char* const kTyped[] = {"type", "rank", "host", "node", "local_rank", "paths", "flags", "error"};
  const auto typed = [](const std::string& key) {
    for (const char* t : kTyped)
      if (key == t) return true;
    return false;
  };
  const auto put_paths = [&] {
    json paths = json::array();
    for (const auto& p : l.paths) paths.push_back(path_json(p));
    j["paths"] = std::move(paths);
  };
  bool paths_done = false;
  if (l.line.get().is_object()) {
    for (const auto& [key, value] : l.line.get().items()) {
      if (key == "paths") {
        put_paths();
        paths_done = true;
      } else if (key == "flags") {
        j["flags"] = l.flags;
      } else if (!typed(key)) {
        j[key] = value;
      }
    }
  }
  if (!paths_done) put_paths();
  if (!j.contains("flags")) j["flags"] = l.flags;
  if (!l.error.empty()) j["error"] = l.error;
  return j;
}

InventoryLine inventory_from_json(const json& j) {
  const Reader r(j, "inventory");
  InventoryLine l;
  l.rank = r.need<int>("rank");
  l.host = r.take<std::string>("host");
  l.node = r.take<int>("node", -1);
  l.local_rank = r.take<int>("local_rank", -1);
  for (const auto& p : r.array("paths")) {
    const Reader path = r.object(p, "paths");
    l.paths.push_back({path.take<std::string>("scope"), path.take<std::string>("class"), path.maybe<double>("peak_gbps"),
                       path.take<std::string>("basis"), path.take<std::string>("unknown_reason")});
  }
  l.flags = r.list<std::string>("flags");
  l.error = r.take<std::string>("error");
  l.line = JsonValue(j);
  return l;
}

InventoryLine inventory_line(const json& line) { return inventory_from_json(line); }

// ---- measurement -----------------------------------------------------------------

json to_json(const Measurement& m) {
  json j = {
      {"type", "measurement"},
      {"run_id", m.run_id},
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
  if (m.time.ci_high_us > 0) {
    j["time_ci_low_us"] = m.time.ci_low_us;
    j["time_ci_high_us"] = m.time.ci_high_us;
  }
  if (!m.stopped_by.empty()) j["stopped_by"] = m.stopped_by;
  if (m.time.samples > 0) j["time_samples"] = m.time.samples;
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
  if (m.modes) j["modes"] = modes_json(*m.modes, "");
  return j;
}

namespace {

// Bounds no measurement comes near: 1e12 GB/s (a one-rank in-place
// all_reduce, which moves nothing, reaches 2e7 in nccl-tests' own output),
// 100 days a call.
constexpr double kMaxRecordGbps = 1e12;
constexpr double kMaxRecordUs = 1e13;

}  // namespace

void check_measurement_figures(const Measurement& m) {
  const auto refuse = [](const std::string& why) { throw std::runtime_error("measurement line: " + why); };
  const std::pair<const char*, double> times[] = {{"time_min_us", m.time.min_us},       {"time_median_us", m.time.median_us},
                                                  {"time_mean_us", m.time.mean_us},     {"time_p99_us", m.time.p99_us},
                                                  {"time_max_us", m.time.max_us},       {"time_stddev_us", m.time.stddev_us}};
  for (const auto& [key, v] : times)
    if (!(v >= 0 && v <= kMaxRecordUs))
      refuse(fmt::format("{} is {}: a time is a number from 0 to {:g} us", key, v, kMaxRecordUs));
  for (const auto& [key, v] : {std::pair{"algbw_gbps", m.algbw_gbps}, std::pair{"busbw_gbps", m.busbw_gbps}})
    if (!(v >= 0 && v <= kMaxRecordGbps))
      refuse(fmt::format("{} is {}: a bandwidth is a number from 0 to {:g} GB/s", key, v, kMaxRecordGbps));
  // The writers keep every statistic of a sample between its extremes; the
  // slack covers a mean summed in floating point.
  const double slack = 1e-9 * m.time.max_us;
  for (const auto& [key, v] : {std::pair{"time_median_us", m.time.median_us}, std::pair{"time_mean_us", m.time.mean_us},
                               std::pair{"time_p99_us", m.time.p99_us}})
    if (v < m.time.min_us - slack || v > m.time.max_us + slack)
      refuse(fmt::format("{} {} lies outside [time_min_us {}, time_max_us {}]", key, v, m.time.min_us, m.time.max_us));
  if (m.time.samples > m.time.iterations)
    refuse(fmt::format("time_samples {} exceeds iterations {}: each sample times at least one iteration",
                       m.time.samples, m.time.iterations));
  const auto op = parse_op(m.op);
  if (!op) throw UnknownName(fmt::format("measurement line: op '{}' is not one this fabricbench knows", m.op));
  if (!parse_scope(m.scope))
    throw UnknownName(
        fmt::format("measurement line: scope '{}' is not one this fabricbench knows ({})", m.scope, allowed_scopes()));
  // bytes is count elements of the dtype for every op (layout.cpp rounds the
  // requested size down to whole elements; nccl-tests' size column is the same).
  if (const auto dtype = parse_dtype(m.dtype); dtype && m.count * dtype_bytes(*dtype) != m.bytes)
    refuse(fmt::format("bytes {} is not count {} x {} bytes of {}", m.bytes, m.count, dtype_bytes(*dtype), m.dtype));
  // Every writer derives busbw from algbw (runner.cpp; the nccl-tests import
  // recomputes it): a record where they disagree was edited or is corrupt.
  const double busbw = m.algbw_gbps * busbw_factor(*op, m.nranks);
  if (std::abs(m.busbw_gbps - busbw) > 1e-9 * std::max(m.busbw_gbps, busbw) + 1e-12)
    refuse(fmt::format("busbw_gbps {} is not algbw_gbps {} x {}'s factor {} on {} ranks ({})", m.busbw_gbps,
                       m.algbw_gbps, m.op, busbw_factor(*op, m.nranks), m.nranks, busbw));
}

Measurement measurement_from_json(const json& j) {
  const Reader r(j, "measurement");
  Measurement m;
  m.run_id = r.take<std::string>("run_id");  // since 1.4
  m.op = r.need<std::string>("op");
  m.backend = r.need<std::string>("backend");
  m.scope = r.need<std::string>("scope");
  m.path = r.need<std::string>("path");
  m.dtype = r.need<std::string>("dtype");
  m.redop = r.need<std::string>("redop");
  m.root = r.need<int>("root");
  m.nranks = r.need<int>("nranks");
  m.groups = r.need<int>("groups");
  m.bytes = r.need<std::uint64_t>("bytes");
  m.count = r.need<std::uint64_t>("count");
  m.in_place = r.need<bool>("in_place");
  m.time.iterations = r.need<std::size_t>("iterations");
  m.time.min_us = r.need<double>("time_min_us");
  m.time.median_us = r.need<double>("time_median_us");
  m.time.mean_us = r.need<double>("time_mean_us");
  m.time.p99_us = r.need<double>("time_p99_us");
  m.time.max_us = r.need<double>("time_max_us");
  m.time.stddev_us = r.need<double>("time_stddev_us");
  m.algbw_gbps = r.need<double>("algbw_gbps");
  m.busbw_gbps = r.need<double>("busbw_gbps");
  m.slowest_rank = r.need<int>("slowest_rank");
  m.slowest_rank_lag_us = r.need<double>("slowest_rank_lag_us");
  m.slowest_rank_mean_us = r.need<double>("slowest_rank_mean_us");
  m.wrong = r.need<std::int64_t>("wrong");
  if (r.has("time_ci_low_us") || r.has("time_ci_high_us")) {  // since 1.5
    m.time.ci_low_us = r.need<double>("time_ci_low_us");
    m.time.ci_high_us = r.need<double>("time_ci_high_us");
  }
  m.stopped_by = r.take<std::string>("stopped_by");         // since 1.5
  m.time.samples = r.take<std::size_t>("time_samples", 0);  // since 1.6
  if (r.has("peer_a")) {
    m.peer_a = r.need<int>("peer_a");
    m.peer_b = r.need<int>("peer_b");
  }
  m.wrong_ranks = r.list<int>("wrong_ranks");
  for (const auto& w : r.array("wrong_at")) {
    const Reader at = r.object(w, "wrong_at");
    m.wrong_at.push_back({at.need<int>("rank"), at.need<std::int64_t>("iteration"), at.need<std::int64_t>("elements")});
  }
  m.pass = r.take<int>("pass");
  m.rank_mean_us = r.list<double>("rank_mean_us");
  if (r.has("modes")) m.modes = modes_from(r.object(j.at("modes"), "modes"));  // since 1.9
  check_measurement_figures(m);
  return m;
}

// ---- skip --------------------------------------------------------------------

json to_json(const Skip& s) {
  return {{"type", "skip"},          {"op", s.op},         {"scope", s.scope}, {"bytes", s.bytes},
          {"in_place", s.in_place}, {"reason", s.reason}};
}

Skip skip_from_json(const json& j) {
  const Reader r(j, "skip");
  return {r.take<std::string>("op"), r.take<std::string>("scope"), r.take<std::uint64_t>("bytes"),
          r.take<bool>("in_place"), r.take<std::string>("reason", "no reason given")};
}

// ---- pair, node, finding -----------------------------------------------------------

json to_json(const PairLine& p) {
  json j = {{"type", "pair"},
            {"rail", p.rail},
            {"retest", p.retest},
            {"round", p.round},
            {"node_a", p.node_a},
            {"node_b", p.node_b},
            {"host_a", p.host_a},
            {"host_b", p.host_b},
            {"path", p.path},
            {"bytes", p.bytes},
            {"window", p.window},
            {"latency_bytes", p.latency_bytes},
            {"iterations", p.iterations},
            {"unidir_ab_gbps", optional_number(p.unidir_ab_gbps)},
            {"unidir_ba_gbps", optional_number(p.unidir_ba_gbps)},
            {"bidir_gbps", optional_number(p.bidir_gbps)},
            {"latency_us", optional_number(p.latency_us)},
            {"latency_p99_us", optional_number(p.latency_p99_us)}};
  if (p.modes) j["modes"] = modes_json(*p.modes, p.modes_op);
  return j;
}

PairLine pair_from_json(const json& j) {
  const Reader r(j, "pair");
  PairLine p;
  p.rail = r.take<int>("rail");
  p.retest = r.take<bool>("retest");
  p.round = r.take<int>("round");
  p.node_a = r.take<int>("node_a", -1);
  p.node_b = r.take<int>("node_b", -1);
  p.host_a = r.take<std::string>("host_a");
  p.host_b = r.take<std::string>("host_b");
  p.path = r.take<std::string>("path");
  p.bytes = r.take<std::uint64_t>("bytes");
  p.window = r.take<int>("window");
  p.latency_bytes = r.take<std::uint64_t>("latency_bytes");
  p.iterations = r.take<std::size_t>("iterations");
  p.unidir_ab_gbps = r.maybe<double>("unidir_ab_gbps");
  p.unidir_ba_gbps = r.maybe<double>("unidir_ba_gbps");
  p.bidir_gbps = r.maybe<double>("bidir_gbps");
  p.latency_us = r.maybe<double>("latency_us");
  p.latency_p99_us = r.maybe<double>("latency_p99_us");
  if (r.has("modes")) {  // since 1.9
    const Reader modes = r.object(j.at("modes"), "modes");
    p.modes = modes_from(modes);
    p.modes_op = modes.need<std::string>("op");
  }
  return p;
}

json to_json(const NodeLine& n) {
  return {{"type", "node"},
          {"rail", n.rail},
          {"node", n.node},
          {"host", n.host},
          {"links", n.links},
          {"low_links", n.low_links},
          {"unidir_median_gbps", n.unidir_median_gbps},
          {"unidir_min_gbps", n.unidir_min_gbps},
          {"bidir_median_gbps", n.bidir_median_gbps},
          {"latency_median_us", n.latency_median_us},
          {"suspect", n.suspect},
          {"reference_node", n.reference_node}};
}

NodeLine node_from_json(const json& j) {
  const Reader r(j, "node");
  NodeLine n;
  n.rail = r.take<int>("rail");
  n.node = r.take<int>("node", -1);
  n.host = r.take<std::string>("host");
  n.links = r.take<int>("links");
  n.low_links = r.take<int>("low_links");
  n.unidir_median_gbps = r.take<double>("unidir_median_gbps");
  n.unidir_min_gbps = r.take<double>("unidir_min_gbps");
  n.bidir_median_gbps = r.take<double>("bidir_median_gbps");
  n.latency_median_us = r.take<double>("latency_median_us");
  n.suspect = r.take<bool>("suspect");
  n.reference_node = r.take<bool>("reference_node");
  return n;
}

json to_json(const FindingLine& f) {
  json j = {{"type", "finding"}, {"rail", f.rail}, {"kind", f.kind}};
  if (f.kind == "node") {
    j["node"] = f.node;
    j["low_links"] = f.low_links;
    j["links"] = f.links;
  } else {
    j["node_a"] = f.node_a;
    j["node_b"] = f.node_b;
  }
  j["hosts"] = f.hosts;
  j["ratio"] = f.ratio;
  j["worst"] = f.worst;
  j["threshold"] = f.threshold;
  j["retested_against"] = f.retested_against ? json(*f.retested_against) : json(nullptr);
  j["retest_ratio"] = optional_number(f.retest_ratio);
  j["confirmed"] = f.confirmed;
  j["intermittent"] = f.intermittent;
  j["detail"] = f.detail;
  return j;
}

FindingLine finding_from_json(const json& j) {
  const Reader r(j, "finding");
  FindingLine f;
  f.rail = r.take<int>("rail");
  f.kind = r.take<std::string>("kind");
  f.node = r.take<int>("node", -1);
  f.low_links = r.take<int>("low_links");
  f.links = r.take<int>("links");
  f.node_a = r.take<int>("node_a", -1);
  f.node_b = r.take<int>("node_b", -1);
  f.hosts = r.list<std::string>("hosts");
  f.ratio = r.take<double>("ratio");
  f.worst = r.take<std::string>("worst");
  f.threshold = r.take<double>("threshold");
  f.retested_against = r.maybe<std::string>("retested_against");
  f.retest_ratio = r.maybe<double>("retest_ratio");
  f.confirmed = r.take<bool>("confirmed");
  f.intermittent = r.take<bool>("intermittent");
  f.detail = r.take<std::string>("detail");
  return f;
}

// ---- check -------------------------------------------------------------------

json to_json(const CheckRow& row) {
  json j = {{"op", row.op},       {"scope", row.scope}, {"bytes", row.bytes},  {"in_place", row.in_place},
            {"dtype", row.dtype}, {"path", row.path},   {"nranks", row.nranks}};
  if (row.peers) j["peers"] = {row.peers->first, row.peers->second};
  return j;
}

json to_json(const CheckLine& c) {
  return {{"type", "check"},
          {"rule", c.rule},
          {"kind", c.kind},
          {"status", c.status},
          {"optional", c.optional},
          {"measured", optional_number(c.measured)},
          {"expected", optional_number(c.expected)},
          {"unit", c.unit},
          {"expected_text", c.expected_text},
          {"margin", optional_number(c.margin)},
          {"reason", c.reason},
          {"row", c.row ? to_json(*c.row) : json(nullptr)}};
}

CheckLine check_from_json(const json& j) {
  const Reader r(j, "check");
  CheckLine c;
  c.rule = r.take<std::string>("rule");
  c.kind = r.take<std::string>("kind");
  c.status = r.take<std::string>("status");
  c.optional = r.take<bool>("optional");
  c.measured = r.maybe<double>("measured");
  c.expected = r.maybe<double>("expected");
  c.unit = r.take<std::string>("unit");
  c.expected_text = r.take<std::string>("expected_text");
  c.margin = r.maybe<double>("margin");
  c.reason = r.take<std::string>("reason");
  if (const auto it = j.find("row"); it != j.end() && !it->is_null()) {
    const Reader row = r.object(*it, "row");
    CheckRow out{row.take<std::string>("op"),     row.take<std::string>("scope"), row.take<std::uint64_t>("bytes"),
                 row.take<bool>("in_place"),      row.take<std::string>("dtype"), row.take<std::string>("path"),
                 row.take<int>("nranks"),         std::nullopt};
    const auto peers = row.list<int>("peers");
    if (peers.size() == 2) out.peers = std::pair{peers[0], peers[1]};
    c.row = std::move(out);
  }
  return c;
}

// ---- gemm, step, step_model ------------------------------------------------------

json to_json(const GemmLine& g) {
  return {{"type", "gemm"},
          {"rank", g.rank},
          {"host", g.host},
          {"device", g.device},
          {"gpu", g.gpu},
          {"pci_bus_id", g.pci_bus_id},
          {"dtype", g.dtype},
          {"m", g.m},
          {"n", g.n},
          {"k", g.k},
          {"iterations", g.iterations},
          {"time_min_us", g.time_min_us},
          {"time_median_us", g.time_median_us},
          {"time_max_us", g.time_max_us},
          {"tflops", g.tflops}};
}

GemmLine gemm_from_json(const json& j) {
  const Reader r(j, "gemm");
  GemmLine g;
  g.rank = r.take<int>("rank");
  g.host = r.take<std::string>("host");
  g.device = r.take<int>("device", -1);
  g.gpu = r.take<std::string>("gpu");
  g.pci_bus_id = r.take<std::string>("pci_bus_id");
  g.dtype = r.take<std::string>("dtype");
  g.m = r.take<int>("m");
  g.n = r.take<int>("n");
  g.k = r.take<int>("k");
  g.iterations = r.take<std::size_t>("iterations");
  g.time_min_us = r.take<double>("time_min_us");
  g.time_median_us = r.take<double>("time_median_us");
  g.time_max_us = r.take<double>("time_max_us");
  g.tflops = r.take<double>("tflops");
  return g;
}

json to_json(const StepLine& s) {
  json modes = json::object();
  for (const auto& m : s.modes)
    modes[m.mode] = {{"iterations", m.iterations},       {"time_min_us", m.time_min_us},
                     {"time_median_us", m.time_median_us}, {"time_mean_us", m.time_mean_us},
                     {"time_p99_us", m.time_p99_us},     {"time_max_us", m.time_max_us},
                     {"slowest_rank", m.slowest_rank},   {"slowest_rank_mean_us", m.slowest_rank_mean_us}};
  json comms = json::array();
  for (const auto& c : s.comms)
    comms.push_back({{"name", c.name},
                     {"group", c.group},
                     {"op", c.op},
                     {"bytes", c.bytes},
                     {"calls", c.calls},
                     {"window", c.window},
                     {"per_call_us", c.per_call_us},
                     {"per_step_us", c.per_step_us}});
  return {{"type", "step"},
          {"workload", s.workload},
          {"backend", s.backend},
          {"dp", s.dp},
          {"tp", s.tp},
          {"pp", s.pp},
          {"kernel", s.kernel},
          {"planned_compute_us", s.planned_compute_us},
          {"modes", std::move(modes)},
          {"comm_share", s.comm_share},
          {"exposed_share", s.exposed_share},
          {"efficiency", s.efficiency},
          {"hidden_us", s.hidden_us},
          {"comms", std::move(comms)}};
}

StepLine step_from_json(const json& j) {
  const Reader r(j, "step");
  StepLine s;
  s.workload = r.take<std::string>("workload");
  s.backend = r.take<std::string>("backend");
  s.dp = r.take<int>("dp");
  s.tp = r.take<int>("tp");
  s.pp = r.take<int>("pp");
  s.kernel = r.take<std::string>("kernel");
  s.planned_compute_us = r.take<double>("planned_compute_us");
  if (const auto it = j.find("modes"); it != j.end()) {
    if (!it->is_object()) throw std::runtime_error("step line: 'modes' is not an object");
    for (const auto& [mode, v] : it->items()) {
      const Reader m = r.object(v, "modes");
      s.modes.push_back({mode, m.take<std::size_t>("iterations"), m.take<double>("time_min_us"),
                         m.take<double>("time_median_us"), m.take<double>("time_mean_us"),
                         m.take<double>("time_p99_us"), m.take<double>("time_max_us"), m.take<int>("slowest_rank", -1),
                         m.take<double>("slowest_rank_mean_us")});
    }
  }
  s.comm_share = r.take<double>("comm_share");
  s.exposed_share = r.take<double>("exposed_share");
  s.efficiency = r.take<double>("efficiency");
  s.hidden_us = r.take<double>("hidden_us");
  for (const auto& v : r.array("comms")) {
    const Reader c = r.object(v, "comms");
    s.comms.push_back({c.take<std::string>("name"), c.take<std::string>("group"), c.take<std::string>("op"),
                       c.take<std::uint64_t>("bytes"), c.take<int>("calls"), c.take<double>("window"),
                       c.take<double>("per_call_us"), c.take<double>("per_step_us")});
  }
  return s;
}

json to_json(const StepModelLine& p) {
  return {{"type", "step_model"},     {"basis", p.basis},
          {"network", p.network},     {"node", p.node},
          {"compute_us", p.compute_us}, {"comm_us", p.comm_us},
          {"exposed_us", p.exposed_us}, {"step_us", p.step_us},
          {"comm_share", p.comm_share}, {"exposed_share", p.exposed_share},
          {"efficiency", p.efficiency}, {"step_diff_pct", p.step_diff_pct}};
}

StepModelLine step_model_from_json(const json& j) {
  const Reader r(j, "step_model");
  return {r.take<std::string>("basis"),        r.take<std::string>("network"),    r.take<std::string>("node"),
          r.take<double>("compute_us"),         r.take<double>("comm_us"),         r.take<double>("exposed_us"),
          r.take<double>("step_us"),            r.take<double>("comm_share"),      r.take<double>("exposed_share"),
          r.take<double>("efficiency"),         r.take<double>("step_diff_pct")};
}

// ---- storage ---------------------------------------------------------------------

json to_json(const StorageLine& l) {
  return {{"type", "storage"},
          {"run_id", l.run_id},
          {"target", l.target},
          {"path", l.path},
          {"fs_type", l.fs_type},
          {"fs_kind", l.fs_kind},
          {"mount_source", l.mount_source},
          {"mount_options", l.mount_options},
          {"shared", l.shared},
          {"pattern", l.pattern},
          {"mode", l.mode},
          {"o_direct", l.o_direct},
          {"cache", l.cache},
          {"note", l.note},
          {"io_engine", l.io_engine},
          {"queue_depth", l.queue_depth},
          {"sync", l.sync},
          {"fallocate", l.fallocate},
          {"block_bytes", l.block_bytes},
          {"file_bytes", l.file_bytes},
          {"files", l.files},
          {"nodes", l.nodes},
          {"ranks", l.ranks},
          {"hosts", l.hosts},
          {"bytes", l.bytes},
          {"ops", l.ops},
          {"elapsed_us", l.elapsed_us},
          {"aggregate_gbps", l.aggregate_gbps},
          {"iops", l.iops},
          {"node_gbps", l.node_gbps},
          {"node_min_gbps", l.node_min_gbps},
          {"latency_p50_us", l.latency_p50_us},
          {"latency_p99_us", l.latency_p99_us},
          {"latency_max_us", l.latency_max_us}};
}

StorageLine storage_from_json(const json& j) {
  const Reader r(j, "storage");
  StorageLine l;
  l.run_id = r.take<std::string>("run_id");
  l.target = r.take<std::string>("target", "path");
  l.path = r.take<std::string>("path");
  l.fs_type = r.take<std::string>("fs_type");
  l.fs_kind = r.take<std::string>("fs_kind");
  l.mount_source = r.take<std::string>("mount_source");
  l.mount_options = r.take<std::string>("mount_options");
  l.shared = r.take<bool>("shared");
  l.pattern = r.need<std::string>("pattern");
  l.mode = r.take<std::string>("mode");
  l.o_direct = r.take<bool>("o_direct");
  l.cache = r.need<std::string>("cache");
  l.note = r.take<std::string>("note");
  l.io_engine = r.take<std::string>("io_engine");
  l.queue_depth = r.take<int>("queue_depth");
  l.sync = r.take<std::string>("sync");
  l.fallocate = r.take<std::string>("fallocate");
  l.block_bytes = r.take<std::uint64_t>("block_bytes");
  l.file_bytes = r.take<std::uint64_t>("file_bytes");
  l.files = r.take<std::uint64_t>("files");
  l.nodes = r.need<int>("nodes");
  l.ranks = r.take<int>("ranks");
  l.hosts = r.list<std::string>("hosts");
  l.bytes = r.take<std::uint64_t>("bytes");
  l.ops = r.take<std::uint64_t>("ops");
  l.elapsed_us = r.take<double>("elapsed_us");
  l.aggregate_gbps = r.need<double>("aggregate_gbps");
  l.iops = r.take<double>("iops");
  l.node_gbps = r.list<double>("node_gbps");
  l.node_min_gbps = r.take<double>("node_min_gbps");
  l.latency_p50_us = r.take<double>("latency_p50_us");
  l.latency_p99_us = r.take<double>("latency_p99_us");
  l.latency_max_us = r.take<double>("latency_max_us");
  return l;
}

// ---- diagnosis -----------------------------------------------------------------

namespace {

using GpuFigure = std::optional<double> DiagnosisGpuFigures::*;
using NodeFigure = std::optional<double> DiagnosisNodeFigures::*;

constexpr std::pair<const char*, GpuFigure> kGpuFigures[] = {
    {"sm_util_pct", &DiagnosisGpuFigures::sm_util_pct},
    {"mem_util_pct", &DiagnosisGpuFigures::mem_util_pct},
    {"memory_used_pct", &DiagnosisGpuFigures::memory_used_pct},
    {"pcie_tx_gbps", &DiagnosisGpuFigures::pcie_tx_gbps},
    {"pcie_rx_gbps", &DiagnosisGpuFigures::pcie_rx_gbps},
    {"nvlink_tx_gbps", &DiagnosisGpuFigures::nvlink_tx_gbps},
    {"nvlink_rx_gbps", &DiagnosisGpuFigures::nvlink_rx_gbps},
    {"nvlink_busy_pct", &DiagnosisGpuFigures::nvlink_busy_pct},
    {"sm_clock_pct", &DiagnosisGpuFigures::sm_clock_pct},
    {"throttled_pct", &DiagnosisGpuFigures::throttled_pct},
    {"power_w", &DiagnosisGpuFigures::power_w},
    {"power_pct", &DiagnosisGpuFigures::power_pct},
    {"temperature_max_c", &DiagnosisGpuFigures::temperature_max_c},
};

constexpr std::pair<const char*, NodeFigure> kNodeFigures[] = {
    {"nic_tx_gbps", &DiagnosisNodeFigures::nic_tx_gbps},
    {"nic_rx_gbps", &DiagnosisNodeFigures::nic_rx_gbps},
    {"nic_busy_pct", &DiagnosisNodeFigures::nic_busy_pct},
    {"process_cpu_cores", &DiagnosisNodeFigures::process_cpu_cores},
    {"iter_median", &DiagnosisNodeFigures::iter_median},
    {"iter_spread_pct", &DiagnosisNodeFigures::iter_spread_pct},
};

json figures_json(const DiagnosisGpuFigures& g) {
  json j = json::object();
  for (const auto& [key, field] : kGpuFigures) j[key] = optional_number(g.*field);
  j["throttle_reasons"] = g.throttle_reasons;
  return j;
}

json figures_json(const DiagnosisNodeFigures& n) {
  json j = {{"gpus", n.gpus}, {"nic", n.nic}};
  for (const auto& [key, field] : kNodeFigures) j[key] = optional_number(n.*field);
  j["process_alive"] = n.process_alive ? json(*n.process_alive) : json(nullptr);
  j["iterations"] = n.iterations;
  j["iter_unit"] = n.iter_unit;
  return j;
}

}  // namespace

json to_json(const DiagnosisLine& d) {
  json j = {{"type", "diagnosis"}, {"level", d.level}, {"node", d.node}, {"host", d.host}};
  if (d.level == "gpu") {
    j["gpu"] = d.gpu;
    j["gpu_model"] = d.gpu_model;
    j["bus_id"] = d.bus_id;
  }
  j["verdict"] = d.verdict;
  j["also"] = d.also;
  j["reason"] = d.reason;
  j["window_s"] = d.window_s;
  j["samples"] = d.samples;
  if (d.gpu_figures) j["figures"] = figures_json(*d.gpu_figures);
  if (d.node_figures) j["figures"] = figures_json(*d.node_figures);
  json unknown = json::object();
  for (const auto& [figure, why] : d.unknown) unknown[figure] = why;
  j["unknown"] = std::move(unknown);
  return j;
}

DiagnosisLine diagnosis_from_json(const json& j) {
  const Reader r(j, "diagnosis");
  DiagnosisLine d;
  d.level = r.need<std::string>("level");
  d.node = r.take<int>("node", -1);
  d.host = r.take<std::string>("host");
  d.gpu = r.take<int>("gpu", -1);
  d.gpu_model = r.take<std::string>("gpu_model");
  d.bus_id = r.take<std::string>("bus_id");
  d.verdict = r.need<std::string>("verdict");
  d.also = r.list<std::string>("also");
  d.reason = r.take<std::string>("reason");
  d.window_s = r.take<double>("window_s");
  d.samples = r.take<std::size_t>("samples");
  if (const auto it = j.find("figures"); it != j.end() && !it->is_null()) {
    const Reader f = r.object(*it, "figures");
    if (d.level == "gpu") {
      DiagnosisGpuFigures g;
      for (const auto& [key, field] : kGpuFigures) g.*field = f.maybe<double>(key);
      g.throttle_reasons = f.list<std::string>("throttle_reasons");
      d.gpu_figures = std::move(g);
    } else {
      DiagnosisNodeFigures n;
      n.gpus = f.take<std::size_t>("gpus");
      n.nic = f.take<std::string>("nic");
      for (const auto& [key, field] : kNodeFigures) n.*field = f.maybe<double>(key);
      n.process_alive = f.maybe<bool>("process_alive");
      n.iterations = f.take<std::size_t>("iterations");
      n.iter_unit = f.take<std::string>("iter_unit");
      d.node_figures = std::move(n);
    }
  }
  if (const auto it = j.find("unknown"); it != j.end() && it->is_object())
    for (const auto& [figure, why] : it->items())
      d.unknown.emplace_back(figure, why.is_string() ? why.get<std::string>() : why.dump());
  return d;
}

// ---- summary -------------------------------------------------------------------

json to_json(const Summary& s) {
  json j = {{"type", "summary"}, {"status", s.status}};
  if (!s.reason.empty()) j["reason"] = s.reason;
  if (!s.report.is_null()) j["report"] = s.report.get();
  if (s.sweep) {
    j["rows"] = s.sweep->rows;
    j["skipped"] = s.sweep->skipped;
    if (const auto& f = s.sweep->figures) {
      j["wrong"] = f->wrong;
      if (f->wrong_ranks) j["wrong_ranks"] = *f->wrong_ranks;
      if (f->passes) j["passes"] = *f->passes;
      j["avg_busbw_gbps"] = f->avg_busbw_gbps;
    }
  }
  if (const auto& p = s.pairs) {
    j["pairs"] = p->pairs;
    j["retests"] = p->retests;
    j["rounds"] = p->rounds;
    j["retest_rounds"] = p->retest_rounds;
    j["findings"] = p->findings;
    j["failing_findings"] = p->failing_findings;
    j["bad_nodes"] = p->bad_nodes;
    j["reference_unidir_gbps"] = p->reference_unidir_gbps;
    j["reference_bidir_gbps"] = p->reference_bidir_gbps;
    j["threshold"] = p->threshold;
  }
  if (const auto& t = s.topo) {
    j["ranks"] = t->ranks;
    j["nodes"] = t->nodes;
    j["flags"] = t->flags;
    j["heterogeneous"] = t->heterogeneous;
    j["differences"] = t->differences.is_null() ? json::array() : t->differences.get();
  }
  if (const auto& g = s.gemm) {
    j["rows"] = g->rows;
    json slowest = json::array();
    for (const auto& w : g->slowest)
      slowest.push_back({{"dtype", w.dtype},
                         {"rank", w.rank},
                         {"host", w.host},
                         {"device", w.device},
                         {"pci_bus_id", w.pci_bus_id},
                         {"tflops", w.tflops},
                         {"fastest_tflops", w.fastest_tflops},
                         {"below_fastest_pct", w.below_fastest_pct}});
    j["slowest"] = std::move(slowest);
  }
  j["elapsed_s"] = s.elapsed_s;
  j["exit_code"] = s.exit_code;
  return j;
}

Summary summary_from_json(const json& j, const std::string& command) {
  const Reader r(j, "summary");
  Summary s;
  s.status = r.take<std::string>("status", "complete");  // 1.0 summaries had no status
  s.reason = r.take<std::string>("reason");
  s.report = r.value("report");
  if ((command == "run" || command == "check" || command == "import") && r.has("rows")) {
    SweepTotals t{r.take<std::size_t>("rows"), r.take<std::size_t>("skipped"), std::nullopt};
    if (r.has("wrong")) {
      SweepTotals::Figures f;
      f.wrong = r.take<std::int64_t>("wrong", -1);
      if (r.has("wrong_ranks")) f.wrong_ranks = r.list<int>("wrong_ranks");
      if (r.has("passes")) f.passes = r.take<int>("passes");
      f.avg_busbw_gbps = r.take<double>("avg_busbw_gbps");
      t.figures = std::move(f);
    }
    s.sweep = std::move(t);
  } else if (command == "pairs" && r.has("pairs")) {
    s.pairs = PairsTotals{r.take<std::size_t>("pairs"),
                          r.take<std::size_t>("retests"),
                          r.take<int>("rounds"),
                          r.take<int>("retest_rounds"),
                          r.take<std::size_t>("findings"),
                          r.take<std::size_t>("failing_findings"),
                          r.list<std::string>("bad_nodes"),
                          r.take<double>("reference_unidir_gbps"),
                          r.take<double>("reference_bidir_gbps"),
                          r.take<double>("threshold")};
  } else if (command == "topo" && r.has("ranks")) {
    s.topo = TopoTotals{r.take<int>("ranks"), r.take<int>("nodes"), r.take<std::size_t>("flags"),
                        r.take<bool>("heterogeneous"), r.value("differences")};
  } else if (command == "gemm" && r.has("rows")) {
    GemmTotals g{r.take<std::size_t>("rows"), {}};
    for (const auto& v : r.array("slowest")) {
      const Reader w = r.object(v, "slowest");
      g.slowest.push_back({w.take<std::string>("dtype"), w.take<int>("rank"), w.take<std::string>("host"),
                           w.take<int>("device", -1), w.take<std::string>("pci_bus_id"), w.take<double>("tflops"),
                           w.take<double>("fastest_tflops"), w.take<double>("below_fastest_pct")});
    }
    s.gemm = std::move(g);
  }
  s.elapsed_s = r.take<double>("elapsed_s");
  s.exit_code = r.take<int>("exit_code");
  return s;
}

json to_json(const RecordLine& line) {
  return std::visit([](const auto& l) { return to_json(l); }, line);
}

std::string make_run_id() {
  const std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  std::random_device device;
  const std::uint64_t bits = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  return fmt::format("{}-{:016x}", stamp, bits);
}

}  // namespace fb
