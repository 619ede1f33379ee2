// Strict reading of YAML maps for the model's inputs: every key must be known,
// required keys must be present, and each error names where it is
// ("workload: parallel: tp"). Internal to the model module.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/errors.hpp"

namespace fb::model::detail {

// Every number the model reads is at most this: products of a dozen of them
// stay far from overflow, so no answer is infinite or NaN.
inline constexpr double kMaxNumber = 1e15;

// A whole text file (core/input_file.hpp); throws fb::UsageError "<what> '<path>': cannot read it", or
// naming a path that is not a regular file (a device, a FIFO) or too large.
std::string read_file(const std::string& path, std::string_view what);

// parse(read_file(path)), with the path put before any error's message.
template <typename Parse>
auto parse_file(const std::string& path, std::string_view what, Parse parse) {
  const std::string text = read_file(path, what);
  try {
    return parse(text);
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }
}

// Parses text into one YAML document; yaml-cpp errors and a second document
// become fb::UsageError with `what` (and the line).
YAML::Node load_yaml(std::string_view text, std::string_view what);

class Fields {
 public:
  // Throws UsageError when `node` is not a map, holds a key outside
  // `allowed` or the same key twice.
  Fields(const YAML::Node& node, std::string where, std::initializer_list<std::string_view> allowed);

  const std::string& where() const { return where_; }
  void set_where(std::string where) { where_ = std::move(where); }  // once the item's name is known
  std::string name(std::string_view key) const;  // "where: key"
  bool has(std::string_view key) const;
  YAML::Node node(std::string_view key) const;  // null node when absent

  // Scalars as text; required ones throw naming the key when absent.
  std::string text(std::string_view key) const;
  std::optional<std::string> optional_text(std::string_view key) const;

  // Numbers are at most kMaxNumber.
  double number(std::string_view key) const;  // plain number
  double number_or(std::string_view key, double fallback) const;
  int integer(std::string_view key) const;  // positive integer
  int integer_or(std::string_view key, int fallback) const;
  double count(std::string_view key) const;   // "7B", "2M"
  double fraction_or(std::string_view key, double fallback) const;  // 0.4 or "40%"
  double rate_gbps(std::string_view key) const;  // "400G", "50 GB/s"
  std::uint64_t bytes_or(std::string_view key, std::uint64_t fallback) const;  // "25M"
  bool boolean_or(std::string_view key, bool fallback) const;

 private:
  double bounded(std::string_view key, double value) const;
  YAML::Node map_;
  std::string where_;
};

// The items of a YAML sequence at `key`; throws when absent or not a list.
std::vector<YAML::Node> list(const Fields& fields, std::string_view key);

}  // namespace fb::model::detail
