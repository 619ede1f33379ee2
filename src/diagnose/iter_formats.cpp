// Scanners of the built-in iteration-log formats (iter_formats.hpp). Each
// one visits a character a bounded number of times, whatever the line.
#include "iter_formats.hpp"

#include <array>
#include <cstdlib>

namespace fb::diagnose::scan {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool word(char c) { return digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `text` lowered (ASCII): the formats' words are matched without case.
std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

std::size_t skip_spaces(std::string_view text, std::size_t at) {
  while (at < text.size() && space(text[at])) ++at;
  return at;
}

std::size_t skip_digits(std::string_view text, std::size_t at) {
  while (at < text.size() && digit(text[at])) ++at;
  return at;
}

double value_of(std::string_view text, std::size_t at, std::size_t length) {
  return std::strtod(std::string(text.substr(at, length)).c_str(), nullptr);
}

// The number right after the first `literal` (matched without case) that has
// one, past spaces when `spaces_between`.
std::optional<double> number_after(std::string_view line, std::string_view literal, bool spaces_between) {
  const std::string low = lowered(line);
  for (std::size_t at = low.find(literal); at != std::string::npos; at = low.find(literal, at + 1)) {
    std::size_t p = at + literal.size();
    if (spaces_between) p = skip_spaces(line, p);
    if (const std::size_t n = number_length(line, p)) return value_of(line, p, n);
  }
  return std::nullopt;
}

// key_seconds from `at`, where one of the key names ends: the rest of the form.
std::optional<double> key_rest(std::string_view low, std::string_view line, std::size_t at) {
  bool ms = false;
  if (low.substr(at, 3) == "_ms") {
    ms = true;
    at += 3;
  } else if (low.substr(at, 2) == "_s") {
    at += 2;
  }
  if (at < low.size() && low[at] == '"') ++at;
  at = skip_spaces(low, at);
  if (at == low.size() || (low[at] != ':' && low[at] != '=')) return std::nullopt;
  at = skip_spaces(low, at + 1);
  if (at < low.size() && low[at] == '"') ++at;
  const std::size_t n = number_length(line, at);
  if (n == 0) return std::nullopt;
  const double v = value_of(line, at, n);
  const std::size_t unit = skip_spaces(low, at + n);
  if (low.substr(unit, 2) == "ms") ms = true;
  return ms ? v * 1e-3 : v;
}

// tqdm: the iteration count before the '[' at `open` ("n/total [" with
// spaces allowed before '['), or "" when that is not what precedes it.
std::string_view tqdm_count(std::string_view line, std::size_t open) {
  std::size_t end = open;
  while (end > 0 && space(line[end - 1])) --end;
  std::size_t total = end;
  while (total > 0 && (digit(line[total - 1]) || line[total - 1] == '?')) --total;
  if (total == end || total == 0 || line[total - 1] != '/') return {};
  const std::size_t n_end = total - 1;
  std::size_t n = n_end;
  while (n > 0 && digit(line[n - 1])) --n;
  return line.substr(n, n_end - n);
}

// tqdm: the rate inside the bracket [from, to): the first number after a space
// or ',' that a unit follows; seconds per iteration.
std::optional<double> tqdm_rate(std::string_view line, std::size_t from, std::size_t to) {
  for (std::size_t p = from; p < to; ++p) {
    if (!space(line[p]) && line[p] != ',') continue;
    const std::size_t n = number_length(line, p + 1);
    if (n == 0) continue;
    const std::size_t unit = skip_spaces(line, p + 1 + n);
    const std::string_view u = line.substr(unit, 4);
    if (u == "s/it") return value_of(line, p + 1, n);
    if (u == "it/s") return 1.0 / value_of(line, p + 1, n);
    p += n;  // the number's characters are no separators
  }
  return std::nullopt;
}

}  // namespace

std::size_t number_length(std::string_view text, std::size_t at) {
  if (at >= text.size()) return 0;
  std::size_t p = skip_digits(text, at);
  if (p < text.size() && text[p] == '.' && p + 1 < text.size() && digit(text[p + 1])) {
    p = skip_digits(text, p + 1);
  } else if (p == at) {
    return 0;
  }
  if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
    std::size_t e = p + 1;
    if (e < text.size() && (text[e] == '-' || text[e] == '+')) ++e;
    if (const std::size_t end = skip_digits(text, e); end > e) p = end;
  }
  return p - at;
}

std::optional<double> megatron_ms(std::string_view line) {
  return number_after(line, "elapsed time per iteration (ms):", true);
}

std::optional<double> deepspeed_samples_per_s(std::string_view line) {
  return number_after(line, "currsamplespersec=", false);
}

std::optional<double> key_seconds(std::string_view line) {
  static constexpr std::array<std::string_view, 5> kKeys{"iter_time", "iteration_time", "step_time",
                                                          "time_per_iteration", "time_per_step"};
  const std::string low = lowered(line);
  for (std::size_t at = 0; at < low.size(); ++at) {
    if (at > 0 && word(low[at - 1])) continue;  // a key starts a word
    for (const std::string_view key : kKeys)
      if (low.compare(at, key.size(), key) == 0)
        if (auto v = key_rest(low, line, at + key.size())) return v;
  }
  return std::nullopt;
}

std::optional<double> tqdm_seconds(std::string_view line, std::string& n) {
  for (std::size_t open = line.find('['); open != std::string_view::npos;) {
    std::size_t close = line.find(']', open + 1);
    if (close == std::string_view::npos) close = line.size();
    if (const std::string_view count = tqdm_count(line, open); !count.empty()) {
      if (const auto v = tqdm_rate(line, open + 1, close)) {
        n = count;
        return v;
      }
      // A later '[' before the same ']' sees a part of the same bracket: no rate either.
      open = line.find('[', close);
    } else {
      open = line.find('[', open + 1);
    }
  }
  return std::nullopt;
}

}  // namespace fb::diagnose::scan
