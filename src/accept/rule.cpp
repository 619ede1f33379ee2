// Rule vocabulary and thresholds with units.
#include "fabricbench/accept/rule.hpp"

#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/units.hpp"
#include "fabricbench/topo/report.hpp"

namespace fb::accept {
namespace {

constexpr std::array kKinds{
    std::pair{RuleKind::absolute, "absolute"},       std::pair{RuleKind::spec, "spec"},
    std::pair{RuleKind::baseline, "baseline"},       std::pair{RuleKind::latency, "latency"},
    std::pair{RuleKind::stability, "stability"},     std::pair{RuleKind::correctness, "correctness"},
    std::pair{RuleKind::uniformity, "uniformity"},   std::pair{RuleKind::pairs, "pairs"},
    std::pair{RuleKind::storage, "storage"},         std::pair{RuleKind::smoothness, "smoothness"},
    std::pair{RuleKind::mixed_gpus, "mixed_gpus"},   std::pair{RuleKind::transport, "transport"},
    std::pair{RuleKind::shared_gpus, "shared_gpus"}, std::pair{RuleKind::environment, "environment"},
    std::pair{RuleKind::bimodal, "bimodal"},         std::pair{RuleKind::hardware, "hardware"},
    std::pair{RuleKind::counters, "counters"},
};
static_assert(enum_cover::covers<RuleKind, kKinds>([](const auto& e) { return e.first; }),
              "kKinds names every RuleKind in enum order");

// time_us is the median, the figure the table and nccl-tests-style readers use.
constexpr std::array kMetrics{
    std::pair{Metric::busbw, "busbw"},
    std::pair{Metric::algbw, "algbw"},
    std::pair{Metric::time_us, "time_us"},
    std::pair{Metric::time_min_us, "time_min_us"},
    std::pair{Metric::time_mean_us, "time_mean_us"},
    std::pair{Metric::time_p99_us, "time_p99_us"},
    std::pair{Metric::time_max_us, "time_max_us"},
};

constexpr std::array kPairMetrics{
    std::pair{PairMetric::unidir, "unidir"},
    std::pair{PairMetric::bidir, "bidir"},
    std::pair{PairMetric::latency, "latency"},
};

constexpr std::array kPairsAcross{
    std::pair{PairsAcross::links, "links"},
    std::pair{PairsAcross::nodes, "nodes"},
};
static_assert(enum_cover::covers<PairsAcross, kPairsAcross>([](const auto& e) { return e.first; }),
              "kPairsAcross names every PairsAcross in enum order");

// Named as the storage line's JSON keys, so a rule reads what the record says.
constexpr std::array kStorageMetrics{
    std::pair{StorageMetric::aggregate_gbps, "aggregate_gbps"},
    std::pair{StorageMetric::node_min_gbps, "node_min_gbps"},
};
static_assert(enum_cover::covers<StorageMetric, kStorageMetrics>([](const auto& e) { return e.first; }),
              "kStorageMetrics names every StorageMetric in enum order");

template <typename Table, typename Value>
std::string_view lookup_name(const Table& table, Value v) {
  for (const auto& [value, text] : table)
    if (value == v) return text;
  return "?";
}

template <typename Value, typename Table>
std::optional<Value> lookup_value(const Table& table, std::string_view text) {
  for (const auto& [value, name] : table)
    if (text == name) return value;
  return std::nullopt;
}

// A table's names in its order, for "allowed: a, b, c" messages.
template <typename Table>
std::vector<std::string_view> names_of(const Table& table) {
  std::vector<std::string_view> out;
  for (const auto& entry : table) out.push_back(entry.second);
  return out;
}

struct Unit {
  std::string_view name;
  Dimension dimension;
  double scale;  // to GB/s, us, or a fraction
};

// Times and percentages; bandwidths are the one rate parser's
// (core/units.hpp), so a rule reads "400Gbps" as a quote or a preset does.
constexpr std::array<Unit, 7> kUnits{{
    {"ns", Dimension::time, 1e-3},
    {"us", Dimension::time, 1.0},
    {"\xC2\xB5s", Dimension::time, 1.0},  // µs (micro sign)
    {"\xCE\xBCs", Dimension::time, 1.0},  // μs (Greek mu)
    {"ms", Dimension::time, 1e3},
    {"s", Dimension::time, 1e6},
    {"%", Dimension::percent, 0.01},
}};

constexpr std::string_view kSpellings =
    "a number and a unit: GB/s, MB/s, TB/s, GiB/s (bytes) or Gbit/s, Gb/s, Gbps, 400G (bits) for bandwidth; ns, us, "
    "ms, s (time); % (stability); or a fraction: '0.80 of spec', '0.95 of baseline', '1.5 of median'";

[[noreturn]] void bad_limit(std::string_view what, std::string_view text, std::string_view why) {
  throw UsageError(
      fmt::format("{}'{}': {}; write {}", what.empty() ? "" : std::string(what) + " ", text, why, kSpellings));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The leading number of `text`; `rest` gets what follows it.
double leading_number(std::string_view text, std::string_view what, std::string_view& rest) {
  std::size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == 'e' || text[i] == 'E' ||
          ((text[i] == '+' || text[i] == '-') && i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E'))))
    ++i;
  if (!text.empty() && text[0] == '-') bad_limit(what, text, "negative thresholds are not allowed");
  const std::string number(text.substr(0, i));
  char* end = nullptr;
  const double v = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size()) bad_limit(what, text, "no number");
  if (!std::isfinite(v)) bad_limit(what, text, "the number is not finite");
  rest = trim(text.substr(i));
  return v;
}

Limit relative_limit(std::string_view text, std::string_view unit, double v, std::string_view what) {
  Limit l;
  l.dimension = Dimension::relative;
  l.value = v;
  const std::string_view of = trim(unit.substr(2));
  if (of == "spec") {
    l.reference = Reference::spec;
  } else if (of == "baseline") {
    l.reference = Reference::baseline;
  } else if (of == "median") {
    l.reference = Reference::median;
  } else {
    bad_limit(what, text, fmt::format("'of {}': compare with spec, baseline or median", of));
  }
  return l;
}

}  // namespace

std::string_view name(RuleKind kind) { return lookup_name(kKinds, kind); }
std::string_view name(Metric metric) { return lookup_name(kMetrics, metric); }
std::string_view name(PairMetric metric) { return lookup_name(kPairMetrics, metric); }
std::string_view name(PairsAcross across) { return lookup_name(kPairsAcross, across); }
std::string_view name(StorageMetric metric) { return lookup_name(kStorageMetrics, metric); }
std::optional<RuleKind> parse_rule_kind(std::string_view text) { return lookup_value<RuleKind>(kKinds, text); }
std::optional<Metric> parse_metric(std::string_view text) { return lookup_value<Metric>(kMetrics, text); }
std::optional<PairMetric> parse_pair_metric(std::string_view text) {
  return lookup_value<PairMetric>(kPairMetrics, text);
}
std::optional<PairsAcross> parse_pairs_across(std::string_view text) {
  return lookup_value<PairsAcross>(kPairsAcross, text);
}
std::optional<StorageMetric> parse_storage_metric(std::string_view text) {
  return lookup_value<StorageMetric>(kStorageMetrics, text);
}
std::string allowed_rule_kinds() { return fmt::format("{}", fmt::join(names_of(kKinds), ", ")); }
std::string allowed_metrics() { return fmt::format("{}", fmt::join(names_of(kMetrics), ", ")); }
// The attributes topo compares between ranks (topo::fingerprint), so a rule
// and `fabricbench topo` name and read the same things.
std::vector<std::string> inventory_fields() {
  std::vector<std::string> out;
  for (const auto& [field, value] : topo::fingerprint(nlohmann::ordered_json::object())) out.push_back(field);
  return out;
}
std::string allowed_inventory_fields() {
  std::string out;
  for (const auto& f : inventory_fields()) out += (out.empty() ? "" : ", ") + f;
  return out;
}
bool is_inventory_field(std::string_view field) {
  for (const auto& f : inventory_fields())
    if (f == field) return true;
  return false;
}

bool is_time(Metric metric) { return metric != Metric::busbw && metric != Metric::algbw; }
std::string_view unit_of(Metric metric) { return is_time(metric) ? "us" : "GB/s"; }

Limit parse_limit(std::string_view raw, Bound bound, std::string_view what) {
  const std::string_view text = trim(raw);
  std::string_view unit;
  const double v = leading_number(text, what, unit);
  Limit l;
  if (unit.substr(0, 2) == "of" && (unit.size() == 2 || std::isspace(static_cast<unsigned char>(unit[2])))) {
    l = relative_limit(text, unit, v, what);
  } else if (unit.empty()) {
    bad_limit(what, text, "the threshold has no unit");
  } else {
    const Unit* found = nullptr;
    for (const auto& u : kUnits)
      if (u.name == unit) found = &u;
    if (found) {
      l.dimension = found->dimension;
      l.value = v * found->scale;
    } else if (const auto gbps = rate_unit_gbps(unit)) {
      l.dimension = Dimension::bandwidth;
      l.value = v * *gbps;
    } else {
      bad_limit(what, text, rate_unit_problem(unit));
    }
  }
  l.bound = bound;
  l.text = std::string(text);
  return l;
}

}  // namespace fb::accept
