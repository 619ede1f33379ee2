#include "yaml_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/model/units.hpp"
#include "fabricbench/yaml/documents.hpp"

namespace fb::model::detail {
namespace {

}  // namespace

std::string read_file(const std::string& path, std::string_view what) {
  return read_input_file(what, path, {.max_bytes = kMaxConfigBytes});
}

YAML::Node load_yaml(std::string_view text, std::string_view what) {
  const std::string copy(text);
  try {
    YAML::Node doc = YAML::Load(copy);
    // A second document would be ignored without a word: refuse it.
    if (yaml::documents_up_to_two(copy) > 1)
      throw UsageError(fmt::format("{}: more than one YAML document ('---' separates them); give one per file", what));
    return doc;
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}: not valid YAML (line {}, column {}): {}", what, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
}

Fields::Fields(const YAML::Node& node, std::string where, std::initializer_list<std::string_view> allowed)
    : map_(node), where_(std::move(where)) {
  if (!node || !node.IsMap())
    throw UsageError(fmt::format("{}: expected a map of keys ({})", where_, fmt::join(allowed, ", ")));
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) throw UsageError(fmt::format("{}: keys must be plain names", where_));
    const std::string key = kv.first.Scalar();
    // yaml-cpp keeps both and answers the first: say so instead.
    if (!seen.insert(key).second) throw UsageError(fmt::format("{}: key '{}' is given twice", where_, key));
    bool known = false;
    for (const auto a : allowed) known = known || key == a;
    if (!known) throw UsageError(fmt::format("{}: unknown key '{}'; allowed: {}", where_, key, fmt::join(allowed, ", ")));
  }
}

std::string Fields::name(std::string_view key) const { return fmt::format("{}: {}", where_, key); }

bool Fields::has(std::string_view key) const { return static_cast<bool>(map_[std::string(key)]); }

YAML::Node Fields::node(std::string_view key) const { return map_[std::string(key)]; }

std::optional<std::string> Fields::optional_text(std::string_view key) const {
  const YAML::Node n = node(key);
  if (!n || n.IsNull()) return std::nullopt;
  if (!n.IsScalar()) throw UsageError(fmt::format("{}: expected a single value", name(key)));
  return n.Scalar();
}

std::string Fields::text(std::string_view key) const {
  auto v = optional_text(key);
  if (!v) throw UsageError(fmt::format("{}: missing (required)", name(key)));
  return *v;
}

double Fields::bounded(std::string_view key, double v) const {
  if (v > kMaxNumber)
    throw UsageError(fmt::format("{} '{}': too large (at most 1e15); results would not be finite", name(key),
                                 text(key)));
  return v;
}

double Fields::number(std::string_view key) const { return bounded(key, parse_number(text(key), name(key))); }

double Fields::number_or(std::string_view key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

int Fields::integer(std::string_view key) const {
  const double v = number(key);
  if (v < 1 || v != std::floor(v) || v > 1e9)
    throw UsageError(fmt::format("{} '{}': expected a positive whole number", name(key), text(key)));
  return static_cast<int>(v);
}

int Fields::integer_or(std::string_view key, int fallback) const { return has(key) ? integer(key) : fallback; }

double Fields::count(std::string_view key) const {
  const double v = bounded(key, parse_count(text(key), name(key)));
  if (v <= 0) throw UsageError(fmt::format("{} '{}': must be positive", name(key), text(key)));
  return v;
}

double Fields::fraction_or(std::string_view key, double fallback) const {
  return has(key) ? parse_fraction(text(key), name(key)) : fallback;
}

double Fields::rate_gbps(std::string_view key) const {
  const double v = bounded(key, parse_rate_gbps(text(key), name(key)));
  if (v <= 0) throw UsageError(fmt::format("{} '{}': must be positive", name(key), text(key)));
  return v;
}

std::uint64_t Fields::bytes_or(std::string_view key, std::uint64_t fallback) const {
  if (!has(key)) return fallback;
  const std::uint64_t v = parse_bytes(text(key), name(key));
  bounded(key, static_cast<double>(v));
  return v;
}

bool Fields::boolean_or(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const std::string v = text(key);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw UsageError(fmt::format("{} '{}': expected true or false", name(key), v));
}

std::vector<YAML::Node> list(const Fields& fields, std::string_view key) {
  const YAML::Node n = fields.node(key);
  if (!n) throw UsageError(fmt::format("{}: missing (required list)", fields.name(key)));
  if (!n.IsSequence()) throw UsageError(fmt::format("{}: expected a list ('- ...' items)", fields.name(key)));
  return {n.begin(), n.end()};
}

}  // namespace fb::model::detail
