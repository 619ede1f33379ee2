#include "host_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>

namespace fb {

void HostBuffer::Free::operator()(void* p) const { std::free(p); }

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  constexpr std::size_t kAlign = 4096;
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, rounded == 0 ? kAlign : rounded) != 0) throw std::bad_alloc();
  std::memset(p, 0, rounded == 0 ? kAlign : rounded);
  data_.reset(p);
}

std::optional<std::uint64_t> available_host_memory(const std::string& meminfo_path) {
  std::ifstream in(meminfo_path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace fb
