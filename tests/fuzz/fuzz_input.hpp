// Cutting a fuzz input into typed pieces (libFuzzer's FuzzedDataProvider is
// clang-only; the harnesses also build with g++ for corpus replay).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace fb::fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : rest_(reinterpret_cast<const char*>(data), size) {}
  bool empty() const { return rest_.empty(); }
  std::uint8_t byte() { return static_cast<std::uint8_t>(take(1).empty() ? 0 : take_last_[0]); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    const std::string_view b = take(8);
    std::memcpy(&v, b.data(), b.size());
    return v;
  }
  double f64() {
    double v = 0;
    const std::uint64_t bits = u64();
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  }
  // Up to the next NUL (consumed) or the end.
  std::string text() {
    const auto nul = rest_.find('\0');
    std::string out(rest_.substr(0, nul));
    rest_ = nul == std::string_view::npos ? std::string_view() : rest_.substr(nul + 1);
    return out;
  }
  std::string_view remaining() const { return rest_; }

 private:
  std::string_view take(std::size_t n) {
    take_last_ = rest_.substr(0, n);
    rest_.remove_prefix(take_last_.size());
    return take_last_;
  }
  std::string_view rest_;
  std::string_view take_last_;
};

// Fails the run the way a sanitizer would: the harness found a property broken.
[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

}  // namespace fb::fuzz
