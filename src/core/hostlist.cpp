#include "fabricbench/core/hostlist.hpp"

#include <fmt/format.h>

#include <charconv>

#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

constexpr std::size_t kMaxHosts = 1000000;

struct Parser {
  std::string_view flag;
  std::string_view whole;

  [[noreturn]] void bad(std::string_view why) const {
    throw UsageError(fmt::format("{} '{}': {}; write host names or Slurm host lists such as gpu[01-16,20]", flag,
                                 whole, why));
  }

  // "01-03" or "7" -> the numbers as text, padded like the first bound.
  std::vector<std::string> range(std::string_view item) const {
    const auto dash = item.find('-');
    const std::string_view lo = item.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    unsigned long a = 0;
    unsigned long b = 0;
    const auto [ea, ca] = std::from_chars(lo.data(), lo.data() + lo.size(), a);
    const auto [eb, cb] = std::from_chars(hi.data(), hi.data() + hi.size(), b);
    if (lo.empty() || hi.empty() || ca != std::errc() || cb != std::errc() || ea != lo.data() + lo.size() ||
        eb != hi.data() + hi.size())
      bad(fmt::format("'{}' inside brackets is not a number or a range like 01-16", item));
    if (b < a) bad(fmt::format("the range '{}' runs backwards", item));
    if (b - a >= kMaxHosts) bad("more than a million hosts");
    std::vector<std::string> out;
    for (unsigned long v = a; v <= b; ++v) out.push_back(fmt::format("{:0{}}", v, lo.size()));
    return out;
  }

  // One host pattern without top-level commas: text and bracket groups, expanded as a product.
  std::vector<std::string> pattern(std::string_view p) const {
    if (p.empty()) bad("an empty host name (two commas in a row, or a comma at an end)");
    std::vector<std::string> hosts{""};
    while (!p.empty()) {
      const auto open = p.find('[');
      const std::string_view text = p.substr(0, open);
      if (text.find(']') != std::string_view::npos) bad("']' without '['");
      for (auto& h : hosts) h += text;
      if (open == std::string_view::npos) break;
      const auto close = p.find(']', open);
      if (close == std::string_view::npos) bad("'[' without ']'");
      const std::string_view inside = p.substr(open + 1, close - open - 1);
      if (inside.find('[') != std::string_view::npos) bad("brackets inside brackets");
      std::vector<std::string> numbers;
      for (std::string_view rest = inside;;) {
        const auto comma = rest.find(',');
        for (auto& n : range(rest.substr(0, comma))) numbers.push_back(std::move(n));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      if (hosts.size() * numbers.size() > kMaxHosts) bad("more than a million hosts");
      std::vector<std::string> next;
      for (const auto& h : hosts)
        for (const auto& n : numbers) next.push_back(h + n);
      hosts = std::move(next);
      p = p.substr(close + 1);
    }
    return hosts;
  }
};

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view list, std::string_view flag) {
  const Parser parser{flag, list};
  std::vector<std::string> out;
  std::size_t depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') {
      if (depth == 0) parser.bad("']' without '['");
      --depth;
    }
    if (c != ',' || depth > 0) continue;
    for (auto& h : parser.pattern(list.substr(start, i - start))) out.push_back(std::move(h));
    if (out.size() > kMaxHosts) parser.bad("more than a million hosts");
    start = i + 1;
  }
  if (depth > 0) parser.bad("'[' without ']'");
  return out;
}

}  // namespace fb
