// The record's lines as JSON, both ways: the one place their keys are spelt
// (docs/results-schema.md; tests/core/record_lines_test.cpp holds the two
// together).
#include "fabricbench/core/record_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
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
#include "record_fields.hpp"

namespace fb {

using json = nlohmann::ordered_json;

JsonValue::JsonValue(const json& value) : value_(value.is_null() ? nullptr : std::make_shared<const json>(value)) {}

bool JsonValue::is_null() const { return !value_; }

const json& JsonValue::get() const {
  static const json null;
  return value_ ? *value_ : null;
}

// The field lists live in record_fields, where its helpers need no
// qualification; a unity build then leaks none of their short names.
using record_fields::Reader;

// ---- run ---------------------------------------------------------------------

namespace record_fields {
namespace {

constexpr const char* kSchemaVersionKey = "schema_version";

const auto& build_fields() {
  static const auto f = fields(take("version", &BuildRef::version), take("git_commit", &BuildRef::git_commit),
                               take("git_dirty", &BuildRef::git_dirty), take("build_type", &BuildRef::build_type),
                               take("compiler", &BuildRef::compiler), take("mpi_library", &BuildRef::mpi_library),
                               take("cuda_built", &BuildRef::cuda_built), take("nccl_built", &BuildRef::nccl_built));
  return f;
}

const auto& header_fields() {
  static const auto profile =
      fields(take("name", &ProfileRef::name), take("path", &ProfileRef::path), take("source", &ProfileRef::source));
  static const auto sweep = fields(take("name", &SweepRef::name), take("options", &SweepRef::options));
  static const auto pairs =
      fields(take("size_bytes", &PairsPlanRef::size_bytes), take("iters", &PairsPlanRef::iters),
             take("time_budget_s", &PairsPlanRef::time_budget_s), take("rails", &PairsPlanRef::rails));
  static const auto f = fields(
      need(kSchemaVersionKey, &RunHeader::schema_version), take_or("command", "run", &RunHeader::command),
      take("version", &RunHeader::version), take("argv", &RunHeader::argv), take("start_time", &RunHeader::start_time),
      take("run_id", &RunHeader::run_id), take_or("ranks", -1, &RunHeader::ranks),
      take_or("nodes", -1, &RunHeader::nodes), take("hosts", &RunHeader::hosts),
      take("ranks_per_node", &RunHeader::ranks_per_node), take("rank_node", &RunHeader::rank_node),
      take("mpi_library", &RunHeader::mpi_library), when_set("mpi_thread_level", &RunHeader::mpi_thread_level),
      object_when_set("build", build_fields(), &RunHeader::build), when_set("backend", &RunHeader::backend),
      when_set("backend_version", &RunHeader::backend_version), when_set("simulated", &RunHeader::simulated),
      when_set("counters", &RunHeader::counters), when_set("options", &RunHeader::options),
      object_when_set("profile", profile, &RunHeader::profile), object_when_set("sweeps", sweep, &RunHeader::sweeps),
      object_when_set("pairs", pairs, &RunHeader::pairs));
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const RunHeader& h) {
  json j = {{"type", "run"}};
  record_fields::header_fields().write(h, j);
  j[record_fields::kSchemaVersionKey] = schema_version();  // whatever the header held: this writer's schema
  return j;
}

RunHeader header_from_json(const json& j) {
  return record_fields::header_fields().from<RunHeader>(Reader(j, "run header"));
}

std::optional<int> schema_minor_of(const std::string& version) {
  // Digits, then optionally '.' and digits, and nothing else: "1.x" or "1." is no version.
  const char* const end = version.data() + version.size();
  int major = -1, minor = 0;
  const auto first = std::from_chars(version.data(), end, major);
  if (first.ec != std::errc() || major != kSchemaMajor) return std::nullopt;
  if (first.ptr == end) return 0;
  if (*first.ptr != '.') return std::nullopt;
  const auto second = std::from_chars(first.ptr + 1, end, minor);
  if (second.ec != std::errc() || second.ptr != end || minor < 0) return std::nullopt;
  return minor;
}

namespace {

// Written by fabricbench over MPI, not imported from another tool.
bool is_fabricbench_mpi_record(const RunHeader& h) { return !h.mpi_library.empty() && h.command != "import"; }

const char* timing_name(bool in_groups) { return in_groups ? "in groups" : "one by one"; }
const char* round_trip_clock(bool by_initiator) {
  return by_initiator ? "on the rank that starts them" : "on the slower rank";
}

}  // namespace

std::optional<std::string> mpi_thread_level_of(const RunHeader& h) {
  if (h.mpi_thread_level) return h.mpi_thread_level;
  if (!is_fabricbench_mpi_record(h)) return std::nullopt;
  return "MPI_THREAD_FUNNELED";
}

std::optional<bool> host_timing_in_groups_of(const RunHeader& h) {
  if (!is_fabricbench_mpi_record(h) || !h.backend) return std::nullopt;
  if (*h.backend != "mpi" && *h.backend != "mpi-cuda" && *h.backend != "cuda") return std::nullopt;
  const auto minor = schema_minor_of(h.schema_version);
  if (!minor) return std::nullopt;
  return *minor >= 20;
}

std::optional<bool> round_trips_by_initiator_of(const RunHeader& h) {
  if (h.command == "import") return std::nullopt;
  const auto minor = schema_minor_of(h.schema_version);
  if (!minor) return std::nullopt;
  return *minor >= 21;
}

std::vector<SetupDifference> setup_differences(const RunHeader& a, const RunHeader& b) {
  std::vector<SetupDifference> out;
  if (!a.mpi_library.empty() && !b.mpi_library.empty() && a.mpi_library != b.mpi_library)
    out.push_back({SetupSetting::mpi_library, a.mpi_library, b.mpi_library});
  const auto level_a = mpi_thread_level_of(a), level_b = mpi_thread_level_of(b);
  if (level_a && level_b && *level_a != *level_b) out.push_back({SetupSetting::mpi_thread_level, *level_a, *level_b});
  const auto grouped_a = host_timing_in_groups_of(a), grouped_b = host_timing_in_groups_of(b);
  if (grouped_a && grouped_b && *grouped_a != *grouped_b)
    out.push_back({SetupSetting::host_timing, timing_name(*grouped_a), timing_name(*grouped_b)});
  const auto initiator_a = round_trips_by_initiator_of(a), initiator_b = round_trips_by_initiator_of(b);
  if (initiator_a && initiator_b && *initiator_a != *initiator_b)
    out.push_back({SetupSetting::round_trip_timing, round_trip_clock(*initiator_a), round_trip_clock(*initiator_b)});
  return out;
}

// ---- inventory -----------------------------------------------------------------

namespace record_fields {
namespace {

// unknown_reason is written only when the peak is unknown (then it says why).
const auto& path_fields() {
  static const auto f = fields(take("scope", &InventoryPath::scope), take("class", &InventoryPath::cls),
                               take("peak_gbps", &InventoryPath::peak_gbps), take("basis", &InventoryPath::basis),
                               when_set("unknown_reason", &InventoryPath::unknown_reason));
  return f;
}

// The typed keys; every other key of the line is topo's, kept as it came.
const auto& inventory_fields() {
  static const auto f =
      fields(need("rank", &InventoryLine::rank), take("host", &InventoryLine::host),
             take_or("node", -1, &InventoryLine::node), take_or("local_rank", -1, &InventoryLine::local_rank));
  static const auto lists = fields(object("paths", path_fields(), &InventoryLine::paths),
                                   take("flags", &InventoryLine::flags), when_set("error", &InventoryLine::error));
  static const auto both = std::pair{f, lists};
  return both;
}

}  // namespace
}  // namespace record_fields

json to_json(const InventoryLine& l) {
  // Named, not a structured binding: clang before 16 cannot capture one in a lambda.
  const auto& head = record_fields::inventory_fields().first;
  const auto& lists = record_fields::inventory_fields().second;
  json j = {{"type", "inventory"}};
  head.write(l, j);
  std::vector<std::string> typed_keys = head.keys();
  for (auto& k : lists.keys()) typed_keys.push_back(std::move(k));
  typed_keys.emplace_back("type");
  const auto typed = [&](const std::string& key) {
    return std::find(typed_keys.begin(), typed_keys.end(), key) != typed_keys.end();
  };
  // topo's keys in topo's order; paths and flags where topo put them, the rest at the end.
  const json typed_lists = lists.object(l);
  if (l.line.get().is_object())
    for (const auto& [key, value] : l.line.get().items()) {
      if (!typed(key))
        j[key] = value;
      else if (typed_lists.contains(key) && key != "error")
        j[key] = typed_lists[key];
    }
  for (const auto& [key, value] : typed_lists.items())
    if (!j.contains(key)) j[key] = value;
  return j;
}

InventoryLine inventory_from_json(const json& j) {
  const Reader r(j, "inventory");
  const auto& [head, lists] = record_fields::inventory_fields();
  InventoryLine l;
  head.read(r, l);
  lists.read(r, l);
  l.line = JsonValue(j);
  return l;
}

InventoryLine inventory_line(const json& line) { return inventory_from_json(line); }

// ---- measurement -----------------------------------------------------------------

namespace record_fields {
namespace {

// A row's two modes (core/modes.hpp), since 1.9: high_share is written for
// readers and follows from low_share.
const auto& modes_fields() {
  static const auto f = fields(need("low_us", &TwoModes::low_us), need("low_share", &TwoModes::low_share),
                               need("high_us", &TwoModes::high_us),
                               derived<TwoModes>("high_share", [](const TwoModes& m) { return 1 - m.low_share; }),
                               need("separation", &TwoModes::separation));
  return f;
}

const auto& measurement_fields() {
  using M = Measurement;
  using T = TimeStats;
  static const auto wrong_at = fields(need("rank", &WrongAt::rank), need("iteration", &WrongAt::iteration),
                                      need("elements", &WrongAt::elements));
  static const auto f =
      fields(take("run_id", &M::run_id),  // since 1.4
             need("op", &M::op), need("backend", &M::backend), need("scope", &M::scope), need("path", &M::path),
             need("dtype", &M::dtype), need("redop", &M::redop), need("root", &M::root), need("nranks", &M::nranks),
             need("groups", &M::groups), need("bytes", &M::bytes), need("count", &M::count),
             need("in_place", &M::in_place), need("iterations", &M::time, &T::iterations),
             need("time_min_us", &M::time, &T::min_us), need("time_median_us", &M::time, &T::median_us),
             need("time_mean_us", &M::time, &T::mean_us), need("time_p99_us", &M::time, &T::p99_us),
             need("time_max_us", &M::time, &T::max_us), need("time_stddev_us", &M::time, &T::stddev_us),
             need("algbw_gbps", &M::algbw_gbps), need("busbw_gbps", &M::busbw_gbps),
             need("slowest_rank", &M::slowest_rank), need("slowest_rank_lag_us", &M::slowest_rank_lag_us),
             need("slowest_rank_mean_us", &M::slowest_rank_mean_us), need("wrong", &M::wrong),
             together(when_set("time_ci_low_us", &M::time, &T::ci_low_us),
                      when_set("time_ci_high_us", &M::time, &T::ci_high_us)),  // since 1.5
             when_set("stopped_by", &M::stopped_by),                           // since 1.5
             when_set("time_samples", &M::time, &T::samples),                  // since 1.6
             together(when_set_or("peer_a", -1, &M::peer_a), when_set_or("peer_b", -1, &M::peer_b)),
             when_set("wrong_ranks", &M::wrong_ranks), object_when_set("wrong_at", wrong_at, &M::wrong_at),
             when_set("pass", &M::pass), when_set("rank_mean_us", &M::rank_mean_us),
             object_when_set("modes", modes_fields(), &M::modes));
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const Measurement& m) {
  json j = {{"type", "measurement"}};
  record_fields::measurement_fields().write(m, j);
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
  const std::pair<const char*, double> times[] = {
      {"time_min_us", m.time.min_us}, {"time_median_us", m.time.median_us}, {"time_mean_us", m.time.mean_us},
      {"time_p99_us", m.time.p99_us}, {"time_max_us", m.time.max_us},       {"time_stddev_us", m.time.stddev_us}};
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
  Measurement m = record_fields::measurement_fields().from<Measurement>(Reader(j, "measurement"));
  check_measurement_figures(m);
  return m;
}

// ---- skip --------------------------------------------------------------------

namespace record_fields {
namespace {

const auto& skip_fields() {
  static const auto f = fields(take("op", &Skip::op), take("scope", &Skip::scope), take("bytes", &Skip::bytes),
                               take("in_place", &Skip::in_place), take_or("reason", "no reason given", &Skip::reason));
  return f;
}

const auto& pair_fields() {
  using P = PairLine;
  static const auto f = fields(
      take("rail", &P::rail), take("retest", &P::retest), take("round", &P::round), take_or("node_a", -1, &P::node_a),
      take_or("node_b", -1, &P::node_b), take("host_a", &P::host_a), take("host_b", &P::host_b), take("path", &P::path),
      take("bytes", &P::bytes), take("window", &P::window), take("latency_bytes", &P::latency_bytes),
      take("iterations", &P::iterations), take("unidir_ab_gbps", &P::unidir_ab_gbps),
      take("unidir_ba_gbps", &P::unidir_ba_gbps), take("bidir_gbps", &P::bidir_gbps),
      take("latency_us", &P::latency_us), take("latency_p99_us", &P::latency_p99_us),
      object_when_set("modes", fields(need("op", &PairModes::op), modes_fields()), &P::modes));
  return f;
}

const auto& node_fields() {
  using N = NodeLine;
  static const auto f =
      fields(take("rail", &N::rail), take_or("node", -1, &N::node), take("host", &N::host), take("links", &N::links),
             take("low_links", &N::low_links), take("unidir_median_gbps", &N::unidir_median_gbps),
             take("unidir_min_gbps", &N::unidir_min_gbps), take("bidir_median_gbps", &N::bidir_median_gbps),
             take("latency_median_us", &N::latency_median_us), take("suspect", &N::suspect),
             take("reference_node", &N::reference_node));
  return f;
}

// A finding names a node (kind node) or a link (node_a, node_b); the keys of
// the other kind are left out. The parts: head, node, link, tail.
const auto& finding_fields() {
  using F = FindingLine;
  static const auto f =
      std::tuple{fields(take("rail", &F::rail), take("kind", &F::kind)),
                 fields(take_or("node", -1, &F::node), take("low_links", &F::low_links), take("links", &F::links)),
                 fields(take_or("node_a", -1, &F::node_a), take_or("node_b", -1, &F::node_b)),
                 fields(take("hosts", &F::hosts), take("ratio", &F::ratio), take("worst", &F::worst),
                        take("threshold", &F::threshold), take("retested_against", &F::retested_against),
                        take("retest_ratio", &F::retest_ratio), take("confirmed", &F::confirmed),
                        take("intermittent", &F::intermittent), take("detail", &F::detail))};
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const Skip& s) {
  json j = {{"type", "skip"}};
  record_fields::skip_fields().write(s, j);
  return j;
}

Skip skip_from_json(const json& j) { return record_fields::skip_fields().from<Skip>(Reader(j, "skip")); }

// ---- pair, node, finding -----------------------------------------------------------

json to_json(const PairLine& p) {
  json j = {{"type", "pair"}};
  record_fields::pair_fields().write(p, j);
  return j;
}

PairLine pair_from_json(const json& j) { return record_fields::pair_fields().from<PairLine>(Reader(j, "pair")); }

json to_json(const NodeLine& n) {
  json j = {{"type", "node"}};
  record_fields::node_fields().write(n, j);
  return j;
}

NodeLine node_from_json(const json& j) { return record_fields::node_fields().from<NodeLine>(Reader(j, "node")); }

json to_json(const FindingLine& f) {
  const auto& [head, node, link, tail] = record_fields::finding_fields();
  json j = {{"type", "finding"}};
  head.write(f, j);
  if (f.kind == "node")
    node.write(f, j);
  else
    link.write(f, j);
  tail.write(f, j);
  return j;
}

FindingLine finding_from_json(const json& j) {
  const auto& [head, node, link, tail] = record_fields::finding_fields();
  const Reader r(j, "finding");
  FindingLine f;
  head.read(r, f);
  node.read(r, f);
  link.read(r, f);
  tail.read(r, f);
  return f;
}

// ---- check -------------------------------------------------------------------

namespace record_fields {
namespace {

const auto& check_row_fields() {
  static const auto f =
      fields(take("op", &CheckRow::op), take("scope", &CheckRow::scope), take("bytes", &CheckRow::bytes),
             take("in_place", &CheckRow::in_place), take("dtype", &CheckRow::dtype), take("path", &CheckRow::path),
             take("nranks", &CheckRow::nranks), when_set("peers", &CheckRow::peers));
  return f;
}

const auto& check_fields() {
  using C = CheckLine;
  static const auto f =
      fields(take("rule", &C::rule), take("kind", &C::kind), take("status", &C::status), take("optional", &C::optional),
             take("measured", &C::measured), take("expected", &C::expected), take("unit", &C::unit),
             take("expected_text", &C::expected_text), take("margin", &C::margin), take("reason", &C::reason),
             object("row", check_row_fields(), &C::row));
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const CheckRow& row) { return record_fields::check_row_fields().object(row); }

json to_json(const CheckLine& c) {
  json j = {{"type", "check"}};
  record_fields::check_fields().write(c, j);
  return j;
}

CheckLine check_from_json(const json& j) { return record_fields::check_fields().from<CheckLine>(Reader(j, "check")); }

// ---- gemm, step, step_model ------------------------------------------------------

namespace record_fields {
namespace {

const auto& gemm_fields() {
  using G = GemmLine;
  static const auto f = fields(take("rank", &G::rank), take("host", &G::host), take_or("device", -1, &G::device),
                               take("gpu", &G::gpu), take("pci_bus_id", &G::pci_bus_id), take("dtype", &G::dtype),
                               take("m", &G::m), take("n", &G::n), take("k", &G::k), take("iterations", &G::iterations),
                               take("time_min_us", &G::time_min_us), take("time_median_us", &G::time_median_us),
                               take("time_max_us", &G::time_max_us), take("tflops", &G::tflops));
  return f;
}

// A mode's times sit under its name in `modes` (StepModeTimes::mode is that key).
const auto& step_fields() {
  using S = StepLine;
  using M = StepModeTimes;
  using C = StepComm;
  static const auto mode =
      fields(take("iterations", &M::iterations), take("time_min_us", &M::time_min_us),
             take("time_median_us", &M::time_median_us), take("time_mean_us", &M::time_mean_us),
             take("time_p99_us", &M::time_p99_us), take("time_max_us", &M::time_max_us),
             take_or("slowest_rank", -1, &M::slowest_rank), take("slowest_rank_mean_us", &M::slowest_rank_mean_us));
  static const auto comm = fields(take("name", &C::name), take("group", &C::group), take("op", &C::op),
                                  take("bytes", &C::bytes), take("calls", &C::calls), take("window", &C::window),
                                  take("per_call_us", &C::per_call_us), take("per_step_us", &C::per_step_us));
  using P = StepProduct;
  static const auto product =
      fields(take("name", &P::name), take("m", &P::m), take("n", &P::n), take("k", &P::k),
             take("measured_us", &P::measured_us), take("measured_tflops", &P::measured_tflops),
             take_or("slowest_rank", -1, &P::slowest_rank), take("model_tflops", &P::model_tflops));
  static const auto f = std::tuple{
      fields(take("workload", &S::workload), take("backend", &S::backend), take("dp", &S::dp), take("tp", &S::tp),
             take("pp", &S::pp), take("kernel", &S::kernel), take("planned_compute_us", &S::planned_compute_us),
             take_or("planned_non_gemm_us", 0.0, &S::planned_non_gemm_us),
             take_or("planned_optimizer_us", 0.0, &S::planned_optimizer_us)),
      "modes", mode,
      fields(take_or("compute_us", 0.0, &S::compute_us), take_or("non_gemm_us", 0.0, &S::non_gemm_us),
             take_or("optimizer_us", 0.0, &S::optimizer_us), take("comm_share", &S::comm_share),
             take("exposed_share", &S::exposed_share), take("efficiency", &S::efficiency),
             take("hidden_us", &S::hidden_us), object("comms", comm, &S::comms),
             object_when_set("products", product, &S::products), when_set("products_dtype", &S::products_dtype),
             when_set("products_model_source", &S::products_model_source),
             when_set("products_model_tflops", &S::products_model_tflops))};
  return f;
}

const auto& step_model_fields() {
  using P = StepModelLine;
  static const auto f = fields(take("basis", &P::basis), take("network", &P::network), take("node", &P::node),
                               take("compute_us", &P::compute_us), take_or("non_gemm_us", 0.0, &P::non_gemm_us),
                               take_or("optimizer_us", 0.0, &P::optimizer_us), take("comm_us", &P::comm_us),
                               take("exposed_us", &P::exposed_us), take("step_us", &P::step_us),
                               take("comm_share", &P::comm_share), take("exposed_share", &P::exposed_share),
                               take("efficiency", &P::efficiency), take("step_diff_pct", &P::step_diff_pct));
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const GemmLine& g) {
  json j = {{"type", "gemm"}};
  record_fields::gemm_fields().write(g, j);
  return j;
}

GemmLine gemm_from_json(const json& j) { return record_fields::gemm_fields().from<GemmLine>(Reader(j, "gemm")); }

json to_json(const StepLine& s) {
  const auto& [head, modes_key, mode, tail] = record_fields::step_fields();
  json j = {{"type", "step"}};
  head.write(s, j);
  json modes = json::object();
  for (const auto& m : s.modes) modes[m.mode] = mode.object(m);
  j[modes_key] = std::move(modes);
  tail.write(s, j);
  return j;
}

StepLine step_from_json(const json& j) {
  const auto& [head, modes_key, mode, tail] = record_fields::step_fields();
  const Reader r(j, "step");
  StepLine s;
  head.read(r, s);
  if (const auto it = j.find(modes_key); it != j.end()) {
    if (!it->is_object()) throw std::runtime_error(fmt::format("step line: '{}' is not an object", modes_key));
    for (const auto& [name, v] : it->items()) {
      StepModeTimes m = mode.from<StepModeTimes>(r.object(v, modes_key));
      m.mode = name;
      s.modes.push_back(std::move(m));
    }
  }
  tail.read(r, s);
  return s;
}

json to_json(const StepModelLine& p) {
  json j = {{"type", "step_model"}};
  record_fields::step_model_fields().write(p, j);
  return j;
}

StepModelLine step_model_from_json(const json& j) {
  return record_fields::step_model_fields().from<StepModelLine>(Reader(j, "step_model"));
}

// ---- storage ---------------------------------------------------------------------

namespace record_fields {
namespace {

const auto& storage_fields() {
  using L = StorageLine;
  static const auto f =
      fields(take("run_id", &L::run_id), take_or("target", "path", &L::target), take("path", &L::path),
             take("fs_type", &L::fs_type), take("fs_kind", &L::fs_kind), take("mount_source", &L::mount_source),
             take("mount_options", &L::mount_options), take("shared", &L::shared), need("pattern", &L::pattern),
             take("mode", &L::mode), take("o_direct", &L::o_direct), need("cache", &L::cache), take("note", &L::note),
             take("io_engine", &L::io_engine), take("queue_depth", &L::queue_depth), take("sync", &L::sync),
             take("fallocate", &L::fallocate), take("block_bytes", &L::block_bytes), take("file_bytes", &L::file_bytes),
             take("files", &L::files), need("nodes", &L::nodes), take("ranks", &L::ranks), take("hosts", &L::hosts),
             take("bytes", &L::bytes), take("ops", &L::ops), take("elapsed_us", &L::elapsed_us),
             need("aggregate_gbps", &L::aggregate_gbps), take("iops", &L::iops), take("node_gbps", &L::node_gbps),
             take("node_min_gbps", &L::node_min_gbps), take("latency_p50_us", &L::latency_p50_us),
             take("latency_p99_us", &L::latency_p99_us), take("latency_max_us", &L::latency_max_us));
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const StorageLine& l) {
  json j = {{"type", "storage"}};
  record_fields::storage_fields().write(l, j);
  return j;
}

StorageLine storage_from_json(const json& j) {
  return record_fields::storage_fields().from<StorageLine>(Reader(j, "storage"));
}

// ---- diagnosis -----------------------------------------------------------------

namespace record_fields {
namespace {

constexpr const char* kFiguresKey = "figures";  // a GPU's or a node's, by level
constexpr const char* kUnknownKey = "unknown";  // figure -> why it is unknown

const auto& gpu_figure_fields() {
  using G = DiagnosisGpuFigures;
  static const auto f =
      fields(take("sm_util_pct", &G::sm_util_pct), take("mem_util_pct", &G::mem_util_pct),
             take("memory_used_pct", &G::memory_used_pct), take("pcie_tx_gbps", &G::pcie_tx_gbps),
             take("pcie_rx_gbps", &G::pcie_rx_gbps), take("nvlink_tx_gbps", &G::nvlink_tx_gbps),
             take("nvlink_rx_gbps", &G::nvlink_rx_gbps), take("nvlink_busy_pct", &G::nvlink_busy_pct),
             take("sm_clock_pct", &G::sm_clock_pct), take("throttled_pct", &G::throttled_pct),
             take("power_w", &G::power_w), take("power_pct", &G::power_pct),
             take("temperature_max_c", &G::temperature_max_c), take("throttle_reasons", &G::throttle_reasons));
  return f;
}

const auto& node_figure_fields() {
  using N = DiagnosisNodeFigures;
  static const auto f = fields(take("gpus", &N::gpus), take("nic", &N::nic), take("nic_tx_gbps", &N::nic_tx_gbps),
                               take("nic_rx_gbps", &N::nic_rx_gbps), take("nic_busy_pct", &N::nic_busy_pct),
                               take("process_cpu_cores", &N::process_cpu_cores), take("iter_median", &N::iter_median),
                               take("iter_spread_pct", &N::iter_spread_pct), take("process_alive", &N::process_alive),
                               take("iterations", &N::iterations), take("iter_unit", &N::iter_unit));
  return f;
}

// The parts: head, the GPU's identity (level gpu only), tail, then figures and unknown.
const auto& diagnosis_fields() {
  using D = DiagnosisLine;
  static const auto f =
      std::tuple{fields(need("level", &D::level), take_or("node", -1, &D::node), take("host", &D::host)),
                 fields(take_or("gpu", -1, &D::gpu), take("gpu_model", &D::gpu_model), take("bus_id", &D::bus_id)),
                 fields(need("verdict", &D::verdict), take("also", &D::also), take("reason", &D::reason),
                        take("window_s", &D::window_s), take("samples", &D::samples))};
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const DiagnosisLine& d) {
  const auto& [head, gpu, tail] = record_fields::diagnosis_fields();
  json j = {{"type", "diagnosis"}};
  head.write(d, j);
  if (d.level == "gpu") gpu.write(d, j);
  tail.write(d, j);
  if (d.gpu_figures) j[record_fields::kFiguresKey] = record_fields::gpu_figure_fields().object(*d.gpu_figures);
  if (d.node_figures) j[record_fields::kFiguresKey] = record_fields::node_figure_fields().object(*d.node_figures);
  json unknown = json::object();
  for (const auto& [figure, why] : d.unknown) unknown[figure] = why;
  j[record_fields::kUnknownKey] = std::move(unknown);
  return j;
}

DiagnosisLine diagnosis_from_json(const json& j) {
  const auto& [head, gpu, tail] = record_fields::diagnosis_fields();
  const Reader r(j, "diagnosis");
  DiagnosisLine d;
  head.read(r, d);
  gpu.read(r, d);
  tail.read(r, d);
  if (const auto figures = r.object_at(record_fields::kFiguresKey)) {
    if (d.level == "gpu")
      d.gpu_figures = record_fields::gpu_figure_fields().from<DiagnosisGpuFigures>(*figures);
    else
      d.node_figures = record_fields::node_figure_fields().from<DiagnosisNodeFigures>(*figures);
  }
  if (const auto it = j.find(record_fields::kUnknownKey); it != j.end() && it->is_object())
    for (const auto& [figure, why] : it->items())
      d.unknown.emplace_back(figure, why.is_string() ? why.get<std::string>() : why.dump());
  return d;
}

// ---- counters ------------------------------------------------------------------

namespace record_fields {
namespace {

const auto& counter_fields() {
  using L = CounterLine;
  static const auto f = fields(
      take("run_id", &L::run_id), need("row", &L::row), take("op", &L::op), take("scope", &L::scope),
      take("bytes", &L::bytes), take("in_place", &L::in_place), need("node", &L::node), take("host", &L::host),
      need("device", &L::device), need("device_kind", &L::device_kind), take_or("exercised", true, &L::exercised),
      need("counter", &L::counter), take("delta", &L::delta), when_set("unknown_reason", &L::unknown_reason));
  return f;
}

}  // namespace
}  // namespace record_fields

json to_json(const CounterLine& l) {
  json j = {{"type", "counters"}};
  record_fields::counter_fields().write(l, j);
  return j;
}

CounterLine counter_from_json(const json& j) {
  CounterLine l = record_fields::counter_fields().from<CounterLine>(Reader(j, "counters"));
  if (!l.delta && l.unknown_reason.empty())
    throw std::runtime_error("counters line: 'delta' is null and no 'unknown_reason' says why");
  return l;
}

// ---- summary -------------------------------------------------------------------

namespace record_fields {
namespace {

// A summary is one flat object: status and reason, the totals of the
// command's kind (each group is read when its first key is there), and the
// elapsed time and exit code every summary has.
const auto& summary_fields() {
  using S = Summary;
  using F = SweepTotals::Figures;
  using P = PairsTotals;
  using T = TopoTotals;
  using G = GemmSlowest;
  static const auto slowest =
      fields(take("dtype", &G::dtype), take("rank", &G::rank), take("host", &G::host),
             take_or("device", -1, &G::device), take("pci_bus_id", &G::pci_bus_id), take("tflops", &G::tflops),
             take("fastest_tflops", &G::fastest_tflops), take("below_fastest_pct", &G::below_fastest_pct));
  static const auto f =
      std::tuple{fields(take_or("status", "complete", &S::status),  // 1.0 summaries had no status
                        when_set("reason", &S::reason), when_set("report", &S::report)),
                 fields(take("rows", &SweepTotals::rows), take("skipped", &SweepTotals::skipped)),
                 fields(take_or("wrong", -1, &F::wrong), when_set("wrong_ranks", &F::wrong_ranks),
                        when_set("passes", &F::passes), take("avg_busbw_gbps", &F::avg_busbw_gbps)),
                 fields(take("pairs", &P::pairs), take("retests", &P::retests), take("rounds", &P::rounds),
                        take("retest_rounds", &P::retest_rounds), take("findings", &P::findings),
                        take("failing_findings", &P::failing_findings), take("bad_nodes", &P::bad_nodes),
                        take("reference_unidir_gbps", &P::reference_unidir_gbps),
                        take("reference_bidir_gbps", &P::reference_bidir_gbps), take("threshold", &P::threshold)),
                 fields(take("ranks", &T::ranks), take("nodes", &T::nodes), take("flags", &T::flags),
                        take("heterogeneous", &T::heterogeneous),
                        take_or("differences", JsonValue(json::array()), &T::differences)),
                 fields(take("rows", &GemmTotals::rows), object("slowest", slowest, &GemmTotals::slowest)),
                 fields(take("elapsed_s", &S::elapsed_s), take("exit_code", &S::exit_code))};
  return f;
}

// A group's totals when the line has its first key.
template <typename Totals, typename Group>
std::optional<Totals> group_of(const Group& group, const Reader& r) {
  if (!r.has(group.keys().front().c_str())) return std::nullopt;
  return group.template from<Totals>(r);
}

}  // namespace
}  // namespace record_fields

json to_json(const Summary& s) {
  const auto& [head, sweep, figures, pairs, topo, gemm, tail] = record_fields::summary_fields();
  json j = {{"type", "summary"}};
  head.write(s, j);
  if (s.sweep) {
    sweep.write(*s.sweep, j);
    if (s.sweep->figures) figures.write(*s.sweep->figures, j);
  }
  if (s.pairs) pairs.write(*s.pairs, j);
  if (s.topo) topo.write(*s.topo, j);
  if (s.gemm) gemm.write(*s.gemm, j);
  tail.write(s, j);
  return j;
}

Summary summary_from_json(const json& j, const std::string& command) {
  const auto& [head, sweep, figures, pairs, topo, gemm, tail] = record_fields::summary_fields();
  const Reader r(j, "summary");
  Summary s;
  head.read(r, s);
  if (command == "run" || command == "check" || command == "import") {
    s.sweep = record_fields::group_of<SweepTotals>(sweep, r);
    if (s.sweep) s.sweep->figures = record_fields::group_of<SweepTotals::Figures>(figures, r);
  } else if (command == "pairs") {
    s.pairs = record_fields::group_of<PairsTotals>(pairs, r);
  } else if (command == "topo") {
    s.topo = record_fields::group_of<TopoTotals>(topo, r);
  } else if (command == "gemm") {
    s.gemm = record_fields::group_of<GemmTotals>(gemm, r);
  }
  tail.read(r, s);
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
