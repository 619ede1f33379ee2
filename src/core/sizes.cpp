#include "fabricbench/core/sizes.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <limits>

#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

constexpr std::uint64_t kMaxGridSizes = 100000;

[[noreturn]] void bad_size(std::string_view what, std::string_view text, std::string_view why) {
  throw UsageError(fmt::format("{} '{}': {}; write a byte count such as 8, 1K, 64M or 8G "
                               "(K, M, G, T are powers of 1024, as in nccl-tests)",
                               what, text, why));
}

std::uint64_t suffix_multiplier(std::string_view what, std::string_view text, std::string_view suffix) {
  struct Unit {
    std::string_view name;
    std::uint64_t mult;
  };
  static constexpr std::array<Unit, 10> units{{{"", 1},
                                              {"B", 1},
                                              {"K", 1ull << 10},
                                              {"M", 1ull << 20},
                                              {"G", 1ull << 30},
                                              {"T", 1ull << 40},
                                              {"KiB", 1ull << 10},
                                              {"MiB", 1ull << 20},
                                              {"GiB", 1ull << 30},
                                              {"TiB", 1ull << 40}}};
  for (const auto& u : units)
    if (suffix == u.name) return u.mult;
  if (suffix == "KB" || suffix == "MB" || suffix == "GB" || suffix == "TB" || suffix == "kB")
    bad_size(what, text, fmt::format("'{}' is ambiguous (1000 or 1024?); write {} or {}iB for powers of 1024, or "
                                     "the plain number of bytes",
                                     suffix, suffix.substr(0, 1), suffix.substr(0, 1)));
  bad_size(what, text, fmt::format("unknown unit '{}'", suffix));
}

}  // namespace

std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && (text[i] == '-')) bad_size(what, text, "negative sizes are not allowed");
  std::size_t digits_begin = i;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) bad_size(what, text, "too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == digits_begin) bad_size(what, text, "no number");
  if (i < text.size() && text[i] == '.') bad_size(what, text, "fractions are not allowed");
  std::size_t suffix_begin = i;
  while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::string_view suffix = text.substr(suffix_begin, i - suffix_begin);
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) bad_size(what, text, "trailing characters");
  const std::uint64_t mult = suffix_multiplier(what, text, suffix);
  if (value > std::numeric_limits<std::uint64_t>::max() / mult) bad_size(what, text, "too large");
  return value * mult;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < units.size()) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  if (v == std::floor(v)) return fmt::format("{:.0f} {}", v, units[u]);
  return fmt::format("{:.3g} {}", v, units[u]);
}

std::vector<std::uint64_t> expand(const SizeGrid& grid) {
  if (grid.min_bytes == 0) throw UsageError("--minbytes 0: sizes must be at least 1 byte; use e.g. -b 8");
  if (grid.max_bytes < grid.min_bytes)
    throw UsageError(fmt::format("--maxbytes {} is below --minbytes {}: the sweep runs from -b up to -e",
                                 grid.max_bytes, grid.min_bytes));
  if (grid.step_bytes == 0 && !(grid.step_factor > 1.0))
    throw UsageError(fmt::format("--stepfactor {}: the factor must be greater than 1 (e.g. -f 2), or use "
                                 "--stepbytes for additive steps",
                                 grid.step_factor));
  std::vector<std::uint64_t> sizes;
  std::uint64_t size = grid.min_bytes;
  while (size <= grid.max_bytes) {
    sizes.push_back(size);
    if (sizes.size() > kMaxGridSizes)
      throw UsageError(fmt::format("the size grid from {} to {} has more than {} sizes; use a larger --stepfactor "
                                   "or --stepbytes",
                                   grid.min_bytes, grid.max_bytes, kMaxGridSizes));
    // The next size, or the end of the grid once it would pass -e. Every
    // comparison is made before the arithmetic can wrap or leave the range
    // a uint64 can hold.
    std::uint64_t next = 0;
    if (grid.step_bytes > 0) {
      if (grid.step_bytes > grid.max_bytes - size) break;
      next = size + grid.step_bytes;
    } else {
      const double scaled = std::floor(static_cast<double>(size) * grid.step_factor);
      if (!(scaled < 18446744073709551616.0) || scaled > static_cast<double>(grid.max_bytes)) break;
      next = static_cast<std::uint64_t>(scaled);
      // A factor such as 1.01 cannot advance a small size: take the next byte.
      if (next <= size) {
        if (size == grid.max_bytes) break;
        next = size + 1;
      }
      if (next > grid.max_bytes) break;
    }
    size = next;
  }
  return sizes;
}

}  // namespace fb
