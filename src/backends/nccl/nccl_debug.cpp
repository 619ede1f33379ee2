#include "nccl_debug.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include "fabricbench/core/comm.hpp"

namespace fb {
namespace {

bool verbose_enough(const char* level) {
  return level && (std::strcmp(level, "INFO") == 0 || std::strcmp(level, "TRACE") == 0);
}

}  // namespace

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
  // The level matters only for what NCCL writes: with WARN or less it names no transport.
  if (!verbose_enough(std::getenv("NCCL_DEBUG"))) setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV,GRAPH", 0);
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
}

NcclDebugLog::~NcclDebugLog() {
  // A run that aborts never gets here and keeps the log for the post-mortem.
  if (owned_) std::remove(path_.c_str());
}

std::uint64_t NcclDebugLog::start_offset() {
  if (!started_) {
    started_ = true;
    return 0;
  }
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
