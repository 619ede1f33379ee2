#include "yaml_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/yaml/documents.hpp"

namespace fb::accept {
namespace {

std::string line_prefix(int line) { return line > 0 ? fmt::format("line {}: ", line) : std::string(); }

std::string trim(const std::string& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

int Field::line() const {
  const YAML::Mark m = node_.Mark();
  return m.line >= 0 && !m.is_null() ? m.line + 1 : 0;
}

void Field::fail(std::string_view why) const {
  throw UsageError(fmt::format("{}{}{}{}", line_prefix(line()), where_, where_.empty() ? "" : ": ", why));
}

void Field::expect_map(const std::vector<std::string_view>& allowed) const {
  if (!node_.IsMap())
    fail(where_.empty() ? "a profile is a mapping of keys (name:, backend:, sweeps:, rules: ...)"
                        : "expected a mapping of keys (key: value)");
  std::set<std::string> seen;
  for (const auto& kv : node_) {
    const Field key(kv.first, where_);
    if (!kv.first.IsScalar()) key.fail("keys must be plain words");
    const std::string k = kv.first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || a == k;
    if (!known) key.fail(fmt::format("unknown key '{}'; allowed here: {}", k, fmt::join(allowed, ", ")));
    if (!seen.insert(k).second) key.fail(fmt::format("key '{}' is given twice", k));
  }
}

bool Field::has(std::string_view key) const { return find(key).has_value(); }

std::optional<Field> Field::find(std::string_view key) const {
  if (!node_.IsMap()) return std::nullopt;
  for (const auto& kv : node_)
    if (kv.first.IsScalar() && kv.first.Scalar() == key)
      return Field(kv.second, where_.empty() ? std::string(key) : fmt::format("{}: {}", where_, key));
  return std::nullopt;
}

Field Field::operator[](std::string_view key) const {
  auto f = find(key);
  if (!f) fail(fmt::format("the key '{}' is required", key));
  return *f;
}

std::string Field::text() const {
  if (!node_.IsScalar()) fail("expected a single value, not a list or mapping");
  const std::string s = trim(node_.Scalar());
  if (s.empty()) fail("the value is empty");
  return s;
}

bool Field::boolean() const {
  const std::string s = text();
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  fail(fmt::format("'{}': use true or false", s));
}

std::int64_t Field::integer(std::int64_t lo, std::int64_t hi) const {
  const std::string s = text();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size() || errno == ERANGE) fail(fmt::format("'{}' is not a whole number", s));
  if (v < lo || v > hi) fail(fmt::format("{} is out of range: {} to {}", v, lo, hi));
  return v;
}

double Field::number(double lo, double hi) const {
  const std::string s = text();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) fail(fmt::format("'{}' is not a number", s));
  if (v < lo || v > hi) fail(fmt::format("{} is out of range: {} to {}", s, lo, hi));
  return v;
}

std::uint64_t Field::bytes() const {
  const std::string s = text();
  try {
    return parse_bytes(s, "size");
  } catch (const UsageError& e) {
    fail(e.what());
  }
}

std::vector<std::string> Field::list() const {
  std::vector<std::string> out;
  if (node_.IsSequence()) {
    for (const auto& item : items()) out.push_back(item.text());
  } else {
    const std::string s = text();
    std::size_t start = 0;
    while (start <= s.size()) {
      const std::size_t comma = s.find(',', start);
      const std::string part = trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (part.empty()) fail(fmt::format("'{}': an empty item in the list", s));
      out.push_back(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (out.empty()) fail("the list is empty");
  return out;
}

std::vector<Field> Field::items() const {
  if (!node_.IsSequence()) fail("expected a list (- item per line, or [a, b])");
  std::vector<Field> out;
  std::size_t i = 0;
  for (const auto& item : node_) out.emplace_back(item, fmt::format("{}[{}]", where_, i++));
  return out;
}

YAML::Node load_yaml(std::string_view text) {
  try {
    const std::string copy(text);
    YAML::Node doc = YAML::Load(copy);
    // A second document would be dropped with its rules unjudged: refuse it.
    if (yaml::documents_up_to_two(copy) > 1)
      throw UsageError("the file holds more than one YAML document ('---' separates them); a profile is one "
                       "document: remove the separator or split the file");
    return doc;
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}not valid YAML: {}", line_prefix(e.mark.is_null() ? 0 : e.mark.line + 1), e.msg));
  }
}

}  // namespace fb::accept
