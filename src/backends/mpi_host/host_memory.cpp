#include "host_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <vector>

namespace fb {

namespace fs = std::filesystem;

void HostBuffer::Free::operator()(void* p) const { std::free(p); }

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  constexpr std::size_t kAlign = 4096;
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, rounded == 0 ? kAlign : rounded) != 0) throw std::bad_alloc();
  std::memset(p, 0, rounded == 0 ? kAlign : rounded);
  data_.reset(p);
}

namespace {

std::optional<std::uint64_t> mem_available(const fs::path& meminfo) {
  std::ifstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

// A cgroup file holding one number; nullopt for "max" (v2's no limit) or unreadable.
std::optional<std::uint64_t> number_in(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A key of memory.stat ("inactive_file 123"); 0 when absent.
std::uint64_t stat_value(const fs::path& file, std::string_view key) {
  std::ifstream in(file);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

struct Layout {
  fs::path dir;           // this process's cgroup folder
  fs::path mount;         // the hierarchy's root: the walk up stops there
  const char* limit;      // file names of the version
  const char* usage;
  const char* inactive;   // memory.stat key of reclaimable page cache
};

// v2: "0::/path" with memory.max at the unified mount; v1: "N:...memory...:/path".
std::optional<Layout> find_cgroup(const fs::path& root) {
  std::ifstream in(root / "proc/self/cgroup");
  std::string line;
  std::optional<Layout> v2;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? std::string::npos : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const fs::path rel = fs::path(line.substr(b + 1)).relative_path();
    std::stringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');)
      if (c == "memory") {
        const fs::path mount = root / "sys/fs/cgroup/memory";
        return Layout{mount / rel, mount, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"};
      }
    if (controllers.empty() && line.compare(0, a, "0") == 0) {
      const fs::path mount = root / "sys/fs/cgroup";
      v2 = Layout{mount / rel, mount, "memory.max", "memory.current", "inactive_file"};
    }
  }
  return v2;
}

// The tightest limit minus working set over the cgroup and its ancestors.
std::optional<HostMemory> cgroup_headroom(const fs::path& root) {
  const auto layout = find_cgroup(root);
  if (!layout) return std::nullopt;
  std::optional<HostMemory> best;
  const fs::path mount = layout->mount.lexically_normal();
  for (fs::path dir = layout->dir.lexically_normal();; dir = dir.parent_path()) {
    const auto limit = number_in(dir / layout->limit);
    const auto usage = number_in(dir / layout->usage);
    if (limit && usage) {
      const std::uint64_t reclaimable = stat_value(dir / "memory.stat", layout->inactive);
      const std::uint64_t used = *usage - std::min(*usage, reclaimable);
      const std::uint64_t room = *limit - std::min(*limit, used);
      if (!best || room < best->bytes)
        best = HostMemory{room, fmt::format("the memory cgroup {} (limit {} bytes, {} in use)", dir.string(), *limit,
                                            used)};
    }
    if (dir == mount || !dir.has_relative_path() || dir.parent_path() == dir) break;
  }
  return best;
}

}  // namespace

std::optional<HostMemory> available_host_memory(const std::string& root_text) {
  const fs::path root(root_text);
  std::optional<HostMemory> best;
  if (const auto avail = mem_available(root / "proc/meminfo")) best = HostMemory{*avail, "MemAvailable"};
  if (const auto cg = cgroup_headroom(root); cg && (!best || cg->bytes < best->bytes)) best = cg;
  return best;
}

}  // namespace fb
