// Input files: what may be read and how much (core/input_file.hpp).
#include "fabricbench/core/input_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

constexpr const char* kCeilingVariable = "FABRICBENCH_MAX_INPUT_MIB";  // in messages; max_input_bytes() reads it

std::uintmax_t input_ceiling(const InputRules& rules) { return rules.max_bytes ? rules.max_bytes : max_input_bytes(); }

// Whole MiB, rounded up: a file just over the ceiling does not read as equal to it.
std::string input_mib(std::uintmax_t bytes) { return fmt::format("{} MiB", (bytes + (1u << 20) - 1) >> 20); }

// "; raise the ceiling with FABRICBENCH_MAX_INPUT_MIB=N" where the user can.
std::string raise_input_ceiling(const InputRules& rules, std::uintmax_t needed_bytes) {
  if (rules.max_bytes) return "";
  return fmt::format("; raise the ceiling with {}={}", kCeilingVariable, (needed_bytes >> 20) + 1);
}

// A stream's size is not known: twice the ceiling is the suggestion there.
[[noreturn]] void refuse_oversized_input(std::string_view what, const std::string& path, const InputRules& rules,
                                         std::uintmax_t bytes, bool stream) {
  const std::uintmax_t ceiling = input_ceiling(rules);
  throw UsageError(fmt::format("{} '{}': {} than the {} read at most{}", what, path,
                               stream ? "more" : "is " + input_mib(bytes) + ", more", input_mib(ceiling),
                               raise_input_ceiling(rules, stream ? 2 * ceiling : bytes)));
}

std::string read_input_bounded(std::istream& in, std::string_view what, const std::string& path,
                               const InputRules& rules) {
  const std::uintmax_t ceiling = input_ceiling(rules);
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > ceiling) refuse_oversized_input(what, path, rules, text.size(), true);
  }
  if (in.bad()) throw UsageError(fmt::format("{} '{}': reading it failed: {}", what, path, std::strerror(errno)));
  return text;
}

}  // namespace

std::uintmax_t max_input_bytes() {
  const char* text = std::getenv("FABRICBENCH_MAX_INPUT_MIB");
  if (text == nullptr || *text == '\0') return kDefaultMaxInputMib << 20;
  std::uintmax_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc() || stop != end || value == 0 || value > (std::uintmax_t{1} << 40))
    throw UsageError(fmt::format("{}='{}': not a whole number of MiB above 0; unset it for {} MiB", kCeilingVariable,
                                 text, kDefaultMaxInputMib));
  return value << 20;
}

void check_input_file(std::string_view what, const std::string& path, InputRules rules) {
  if (path == "-" && rules.stdin_ok) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError(fmt::format("{} '{}': cannot read it: {}", what, path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{} '{}': is a folder; give a file", what, path));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("{} '{}': not a regular file (a device, FIFO or socket, which may never end); "
                                 "copy it to a file{}",
                                 what, path, rules.stdin_ok ? ", or pipe it in and give '-'" : ""));
  if (static_cast<std::uintmax_t>(st.st_size) > input_ceiling(rules))
    refuse_oversized_input(what, path, rules, static_cast<std::uintmax_t>(st.st_size), false);
}

std::string read_input_file(std::string_view what, const std::string& path, InputRules rules) {
  check_input_file(what, path, rules);
  if (path == "-") return read_input_bounded(std::cin, what, "-", rules);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{} '{}': cannot read it: {}", what, path, std::strerror(errno)));
  return read_input_bounded(in, what, path, rules);  // bounded still: the file may grow while read
}

}  // namespace fb
