// Iteration times from logs (formats in diagnose/iter_log.hpp).
#include "fabricbench/diagnose/iter_log.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <functional>
#include <map>
#include <regex>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/foreign_text.hpp"
#include "bounded_thread.hpp"
#include "iter_formats.hpp"

namespace fb::diagnose {
namespace {

// One line's time in seconds (or seconds per sample), or nothing.
using LineReader = std::function<std::optional<double>(const std::string& line, std::string& key)>;

struct Format {
  const char* name;
  const char* unit;
  LineReader read;
};

// A --iter-regex: the user's own pattern, through std::regex (the built-in
// formats have scanners of their own, iter_formats.hpp, for why).
LineReader user_regex(const std::string& pattern, double scale) {
  auto re = std::make_shared<std::regex>(pattern, std::regex::ECMAScript | std::regex::icase);
  return [re, scale](const std::string& line, std::string&) -> std::optional<double> {
    std::smatch m;
    if (!std::regex_search(line, m, *re)) return std::nullopt;
    return std::strtod(m[1].str().c_str(), nullptr) * scale;
  };
}

std::optional<double> scaled(std::optional<double> v, double scale) {
  if (v) *v *= scale;
  return v;
}

const std::array<Format, 4>& formats() {
  static const std::array<Format, 4> table{{
      {"megatron", "s", [](const std::string& l, std::string&) { return scaled(scan::megatron_ms(l), 1e-3); }},
      {"key", "s", [](const std::string& l, std::string&) { return scan::key_seconds(l); }},
      {"deepspeed", "s/sample",
       [](const std::string& l, std::string&) -> std::optional<double> {
         const auto rate = scan::deepspeed_samples_per_s(l);
         if (!rate || *rate <= 0) return std::nullopt;
         return 1.0 / *rate;
       }},
      {"tqdm", "s", [](const std::string& l, std::string& key) { return scan::tqdm_seconds(l, key); }},
  }};
  return table;
}

// Lines split at '\n' and at the '\r' progress bars redraw with; a line too
// long for std::regex is passed over and counted in `long_lines`.
std::vector<std::string> lines_of(std::string_view text, LongLines& long_lines) {
  std::vector<std::string> out;
  std::size_t start = 0, number = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n' || text[i] == '\r') {
      const std::string_view line = text.substr(start, i - start);
      if (!line.empty() && long_lines.keep(line, ++number)) out.emplace_back(line);
      start = i + 1;
    }
  }
  return out;
}

void add_note(std::string& note, const std::string& more) {
  if (more.empty()) return;
  note += note.empty() ? more : "; " + more;
}

std::vector<double> read_all(const std::vector<std::string>& lines, const LineReader& read) {
  std::vector<double> values;
  std::string last_key;
  for (const auto& line : lines) {
    std::string key;
    const auto v = read(line, key);
    if (!v || !std::isfinite(*v) || *v <= 0) continue;  // a zero, or a time that underflowed scaling
    if (!key.empty() && key == last_key && !values.empty()) {
      values.back() = *v;  // the same iteration redrawn
      continue;
    }
    last_key = key;
    values.push_back(*v);
  }
  return values;
}

constexpr std::uintmax_t kMaxReadBytes = 16u << 20;  // the end of a bigger log is enough

// The text of `path` from `offset` (at most kMaxReadBytes, the end kept).
std::string read_from(const std::string& path, std::uintmax_t offset, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("--iter-log {}: cannot open it ({})", path, std::strerror(errno));
    return {};
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uintmax_t>(in.tellg());
  if (offset > size) offset = 0;  // rotated or truncated: read it all
  if (size - offset > kMaxReadBytes) offset = size - kMaxReadBytes;
  in.seekg(static_cast<std::streamoff>(offset));
  std::string text(size - offset, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The user's pattern goes through std::regex, which recurses per character
// and backtracks without bound ('(a+)+b' on a run of a's takes 2^n steps):
// matched on its own thread with a 256 MiB stack and a time limit, given in
// FABRICBENCH_ITER_REGEX_TIMEOUT_S (default 20 s).
std::vector<double> read_all_user(const std::vector<std::string>& lines, const IterOptions& options) {
  double limit_s = 20;
  if (const char* env = std::getenv("FABRICBENCH_ITER_REGEX_TIMEOUT_S"); env && *env) {
    char* end = nullptr;
    limit_s = std::strtod(env, &end);
    if (*end != '\0' || !(limit_s > 0 && limit_s <= 86400))
      throw UsageError(fmt::format("FABRICBENCH_ITER_REGEX_TIMEOUT_S '{}': seconds, above 0 and at most 86400", env));
  }
  // The thread may outlive this call (given up on): it owns its copies.
  auto values = std::make_shared<std::vector<double>>();
  auto mine = std::make_shared<const std::vector<std::string>>(lines);
  const LineReader read = user_regex(options.regex, options.regex_scale);
  try {
    run_bounded([values, mine, read] { *values = read_all(*mine, read); }, limit_s, std::size_t{256} << 20);
  } catch (const WorkTimedOut&) {
    throw UsageError(
        fmt::format("--iter-regex '{}': matching it against the log's {} lines took more than {:g} s: "
                    "the pattern backtracks (a repetition inside a repetition, such as (a+)+ or (.*)*); "
                    "make it match only the time, e.g. 'took ([0-9.]+) ms' (the limit is "
                    "FABRICBENCH_ITER_REGEX_TIMEOUT_S)",
                    options.regex, lines.size(), limit_s));
  } catch (const std::regex_error& e) {
    throw UsageError(fmt::format("--iter-regex '{}': std::regex gave up on the log ({})", options.regex, e.what()));
  }
  return std::move(*values);
}

IterSeries parse_lines(const std::vector<std::string>& lines, const IterOptions& options) {
  IterSeries s;
  if (!options.regex.empty()) {
    s.format = "regex";
    s.unit = "s";
    s.values = read_all_user(lines, options);
    if (s.values.empty()) s.note = fmt::format("no line matches --iter-regex '{}'", options.regex);
    return s;
  }
  for (const auto& f : formats()) {
    auto values = read_all(lines, f.read);
    if (values.empty()) continue;
    s.format = f.name;
    s.unit = f.unit;
    s.values = std::move(values);
    return s;
  }
  s.note =
      "no iteration times found: looked for Megatron-LM's 'elapsed time per iteration (ms)', iter_time/step_time "
      "keys, DeepSpeed's CurrSamplesPerSec and tqdm's s/it or it/s; give --iter-regex for other formats";
  return s;
}

}  // namespace

void check_iter_options(const IterOptions& options) {
  if (options.regex.empty()) return;
  try {
    const std::regex re(options.regex, std::regex::ECMAScript);
    if (re.mark_count() < 1)
      throw UsageError(fmt::format("--iter-regex '{}': no group; put the time in parentheses, e.g. 'took ([0-9.]+) ms'",
                                   options.regex));
  } catch (const std::regex_error& e) {
    throw UsageError(fmt::format("--iter-regex '{}': not a regular expression ({})", options.regex, e.what()));
  }
}

IterSeries parse_iterations(std::string_view text, const IterOptions& options) {
  LongLines long_lines;
  const auto lines = lines_of(text, long_lines);
  IterSeries s = parse_lines(lines, options);
  add_note(s.note, long_lines.note("the log"));
  return s;
}

IterLog::IterLog(std::string path, IterOptions options) : path_(std::move(path)), options_(std::move(options)) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  if (ec) {
    start_error_ = fmt::format("--iter-log {}: cannot read it now ({}); it is read again at the end of the window",
                               path_, ec.message());
    return;
  }
  start_size_ = size;
}

IterSeries IterLog::read() const {
  // A pattern given up on (--iter-regex that backtracks) is this source's
  // error, said with the figures it leaves unknown; the GPU figures stand.
  const auto parse = [&](std::string_view text) {
    try {
      return parse_iterations(text, options_);
    } catch (const UsageError& e) {
      IterSeries failed;
      failed.error = e.what();
      return failed;
    }
  };
  std::string error;
  if (start_size_) {
    const std::string fresh = read_from(path_, *start_size_, error);
    if (error.empty()) {
      IterSeries s = parse(fresh);
      if (!s.error.empty()) return s;
      s.source = path_;
      if (s.values.size() >= kMinWindowIterations) {
        std::string note = fmt::format("{} iterations logged during the window", s.values.size());
        add_note(note, s.note);  // lines passed over, if any
        s.note = note;
        return s;
      }
    }
  }
  error.clear();
  const std::string all = read_from(path_, 0, error);
  IterSeries s;
  s.source = path_;
  if (!error.empty()) {
    s.error = error;
    return s;
  }
  s = parse(all);
  s.source = path_;
  if (!s.error.empty()) return s;
  if (s.values.empty()) {
    s.error = fmt::format("--iter-log {}: {}", path_, s.note);
    return s;
  }
  const std::size_t logged = s.values.size();
  if (logged > kTailIterations)
    s.values.erase(s.values.begin(), s.values.end() - static_cast<std::ptrdiff_t>(kTailIterations));
  std::string note = fmt::format(
      "the log's last {} of {} iterations ({} during the window: fewer than {}; the job "
      "may log rarely or have ended)",
      s.values.size(), logged, start_size_ ? "few or none" : "the file was unreadable at the start",
      kMinWindowIterations);
  add_note(note, s.note);  // lines passed over, if any
  s.note = note;
  return s;
}

}  // namespace fb::diagnose
