#include "nccl_debug.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include "fabricbench/core/comm.hpp"

namespace fb {
namespace {

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

std::vector<std::string> names_of(std::string_view list) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos <= list.size();) {
    const std::size_t comma = list.find(',', pos);
    out.emplace_back(list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

bool listed(const std::vector<std::string>& names, std::string_view name) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return same(n, name) || same(n, "ALL"); });
}

}  // namespace

NcclDebugSettings nccl_debug_settings(const char* level, const char* subsys) {
  NcclDebugSettings s;
  s.level = "INFO";
  if (level && *level && (same(level, "INFO") || same(level, "TRACE"))) {
    s.level = level;
  } else if (level && *level) {
    s.notes.push_back(fmt::format("NCCL_DEBUG={} raised to INFO: fabricbench reads NCCL's INFO lines for the path "
                                  "of every row; NCCL's output, its warnings too, goes to NCCL's debug file",
                                  level));
  }
  if (!subsys || !*subsys) {
    s.subsys = "INIT,ENV,GRAPH";
    return s;
  }
  s.subsys = subsys;
  const std::string_view text(subsys);
  if (text.front() == '^') {
    const auto excluded = names_of(text.substr(1));
    s.hides_transports = listed(excluded, "INIT");
    if (s.hides_transports)
      s.notes.push_back(fmt::format("NCCL_DEBUG_SUBSYS={} hides the INIT lines that name NCCL's transports: every "
                                    "nccl row's path reads unknown",
                                    subsys));
    return s;
  }
  const auto names = names_of(text);
  std::string added;
  for (const char* needed : {"INIT", "GRAPH"})
    if (!listed(names, needed)) added += std::string(added.empty() ? "" : ",") + needed;
  if (added.empty()) return s;
  s.subsys += "," + added;
  s.notes.push_back(fmt::format("NCCL_DEBUG_SUBSYS={} extended to {}: NCCL names its transports in INIT lines and "
                                "the links inside a node in GRAPH lines",
                                subsys, s.subsys));
  return s;
}

std::string expand_nccl_debug_file(const std::string& pattern, const std::string& host, long pid) {
  const std::string short_host = host.substr(0, host.find('.'));
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == 'h') {
      out += short_host;
    } else if (c == 'p') {
      out += std::to_string(pid);
    } else if (c == '%') {
      out += '%';
    } else {
      out += '%';
      out += c;
    }
  }
  return out;
}

NcclDebugLog& NcclDebugLog::get() {
  static NcclDebugLog log;
  return log;
}

NcclDebugLog::NcclDebugLog() {
  const NcclDebugSettings settings = nccl_debug_settings(std::getenv("NCCL_DEBUG"), std::getenv("NCCL_DEBUG_SUBSYS"));
  setenv("NCCL_DEBUG", settings.level.c_str(), 1);
  setenv("NCCL_DEBUG_SUBSYS", settings.subsys.c_str(), 1);
  const char* user_file = std::getenv("NCCL_DEBUG_FILE");
  std::string pattern;
  if (user_file && *user_file) {
    pattern = user_file;
  } else {
    const char* tmp = std::getenv("TMPDIR");
    pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabricbench-nccl.%h.%p.log";
    setenv("NCCL_DEBUG_FILE", pattern.c_str(), 1);
    owned_ = true;
  }
  path_ = expand_nccl_debug_file(pattern, host_name(), static_cast<long>(getpid()));
  for (const auto& note : settings.notes) notes_.push_back(fmt::format("{} ({})", note, path_));
  if (settings.hides_transports) unknown_hint_ = fmt::format(" (NCCL_DEBUG_SUBSYS={} hides the transport lines)", settings.subsys);
}

NcclDebugLog::~NcclDebugLog() {
  // A run that aborts never gets here and keeps the log for the post-mortem.
  if (owned_) std::remove(path_.c_str());
}

std::uint64_t NcclDebugLog::size() const {
  struct stat st {};
  return ::stat(path_.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}


std::string NcclDebugLog::read_from(std::uint64_t offset) const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace fb
