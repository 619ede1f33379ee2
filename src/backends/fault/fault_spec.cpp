// Parsing --inject specifications.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/backends/fault.hpp"

namespace fb::fault {
namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UsageError(fmt::format("--inject '{}': {}; write {}", text, why, fault_syntax()));
}

std::optional<Kind> parse_kind(std::string_view k) {
  if (k == "hang") return Kind::hang;
  if (k == "kill") return Kind::kill;
  if (k == "error") return Kind::error;
  if (k == "corrupt") return Kind::corrupt;
  if (k == "slow") return Kind::slow;
  return std::nullopt;
}

std::int64_t parse_count(std::string_view text, std::string_view key, std::string_view value, std::int64_t least) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < least)
    bad(text, fmt::format("{}={} must be a whole number of at least {}", key, value, least));
  return v;
}

double parse_factor(std::string_view text, std::string_view value) {
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || !(v > 1) || !std::isfinite(v) || v > 1e6)
    bad(text, fmt::format("factor={} must be a number above 1 (and at most 1e6)", value));
  return v;
}

void set(Fault& f, std::string_view text, std::string_view key, std::string_view value) {
  if (key == "rank") {
    const std::int64_t r = parse_count(text, key, value, 0);
    if (r > INT32_MAX) bad(text, fmt::format("rank={} is not a rank", value));
    f.rank = static_cast<int>(r);
  } else if (key == "op") {
    f.op = parse_op(value);
    if (!f.op) bad(text, fmt::format("op={} is not one of {}", value, allowed_ops()));
  } else if (key == "bytes") {
    f.bytes = parse_bytes(value, "--inject bytes");
  } else if (key == "after") {
    f.after = parse_count(text, key, value, 0);
  } else if (key == "factor" && f.kind == Kind::slow) {
    f.factor = parse_factor(text, value);
  } else if (key == "count" && f.kind == Kind::corrupt) {
    f.count = static_cast<std::uint64_t>(parse_count(text, key, value, 1));
  } else {
    bad(text, fmt::format("'{}' is not a setting of this kind of fault", key));
  }
}

}  // namespace

std::string fault_syntax() {
  return "KIND:rank=R[,op=OP][,bytes=SIZE][,after=N] with KIND one of hang, kill, error, corrupt[,count=C], "
         "slow[,factor=F]";
}

Fault parse_fault(std::string_view text) {
  const auto colon = text.find(':');
  Fault f;
  f.text = std::string(text);
  const auto kind = parse_kind(text.substr(0, colon));
  if (!kind) bad(text, fmt::format("unknown kind '{}'", text.substr(0, colon)));
  f.kind = *kind;
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  std::vector<std::string_view> seen;  // a key given twice would silently keep only its last value
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) bad(text, fmt::format("'{}' is not key=value", item));
    const std::string_view key = item.substr(0, eq);
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      bad(text, fmt::format("'{}' is given twice; give one value (one --inject per fault)", key));
    seen.push_back(key);
    set(f, text, item.substr(0, eq), item.substr(eq + 1));
  }
  if (f.rank < 0) bad(text, "which rank? rank= is required");
  return f;
}

}  // namespace fb::fault
