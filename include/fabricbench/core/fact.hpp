// A fact read from the machine, or the reason it is unknown. The inventory
// never fills a gap with a guess: a missing file, a driver that does not
// answer or a value that does not parse becomes "unknown" with its reason.
// In core (it was topo's) because the model's answers are facts of the same
// kind (a fitted share, or why none fits) and the model does not read the
// machine; topo keeps the name topo::Fact.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace fb {

template <typename T>
class Fact {
 public:
  Fact() : why_("not read") {}
  Fact(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose, a known value
  Fact(const char* text)                       // NOLINT: a known text
      requires std::is_same_v<T, std::string> : value_(std::string(text)) {}
  static Fact unknown(std::string why) {
    Fact f;
    f.why_ = std::move(why);
    return f;
  }

  bool known() const { return value_.has_value(); }
  explicit operator bool() const { return known(); }
  const T& operator*() const { return *value_; }
  const T* operator->() const { return &*value_; }
  T value_or(T fallback) const { return value_.value_or(std::move(fallback)); }
  // Why the value is unknown ("" when it is known).
  [[nodiscard]] const std::string& why() const { return value_ ? empty() : why_; }

 private:
  static const std::string& empty() {
    static const std::string none;
    return none;
  }
  std::optional<T> value_;
  std::string why_;
};

}  // namespace fb
