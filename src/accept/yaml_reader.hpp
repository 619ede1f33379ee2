// Reading YAML for profiles: every error names the profile line and the key
// path ("rules[2] 'intra busbw': min") and says what is allowed.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb::accept {

// A YAML node with the path that leads to it, for messages.
class Field {
 public:
  Field(YAML::Node node, std::string where) : node_(std::move(node)), where_(std::move(where)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& where() const { return where_; }
  int line() const;  // 1-based, 0 when unknown

  [[noreturn]] void fail(std::string_view why) const;

  // A mapping whose keys are all in `allowed`, each given once.
  void expect_map(const std::vector<std::string_view>& allowed) const;
  bool has(std::string_view key) const;
  Field operator[](std::string_view key) const;  // the child, or fails naming the missing key
  std::optional<Field> find(std::string_view key) const;

  std::string text() const;  // a non-empty scalar
  bool boolean() const;      // true/false
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const;
  double number(double lo, double hi) const;
  std::uint64_t bytes() const;  // "8", "64M", "8G"
  // A sequence of scalars, or one scalar "a, b, c".
  std::vector<std::string> list() const;
  std::vector<Field> items() const;  // a sequence's elements

 private:
  YAML::Node node_;
  std::string where_;
};

// Parses `text` into a root node; syntax errors become fb::UsageError with the line.
YAML::Node load_yaml(std::string_view text);

}  // namespace fb::accept
