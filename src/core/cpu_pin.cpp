#include "fabricbench/core/cpu_pin.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <vector>

namespace fb {
namespace {

// One id per running kernel: shared by every container and network namespace on the host.
std::string machine_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (in >> id && !id.empty()) return id;
  return "host:" + host_name();
}

}  // namespace

CpuSlot cpu_slot_of(std::span<const std::string> ids, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= ids.size()) return {};
  CpuSlot slot;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    if (ids[r] != ids[static_cast<std::size_t>(rank)]) continue;
    if (r < static_cast<std::size_t>(rank)) ++slot.index;
    ++slot.count;
  }
  return slot;
}

CpuSlot cpu_slot(const Comm& world, std::vector<int> near) {
  std::string id = machine_id();
  for (int c : near) id += "," + std::to_string(c);  // ranks near other CPUs take slots of their own
  const std::vector<std::string> ids = world.allgather_strings(id);
  CpuSlot slot = cpu_slot_of(ids, world.rank());
  slot.near = std::move(near);
  return slot;
}

int cpu_for_slot(std::span<const int> allowed, const CpuSlot& slot) {
  std::vector<int> pool(allowed.begin(), allowed.end());
  if (!slot.near.empty())
    std::erase_if(pool, [&](int c) { return !std::binary_search(slot.near.begin(), slot.near.end(), c); });
  // Alone among the ranks near its CPUs, but not on the machine: the near
  // pool keeps it off the other ranks' CPUs.
  const int least = slot.near.empty() ? 2 : 1;
  if (slot.count < least || pool.size() < 2 || pool.size() < static_cast<std::size_t>(slot.count)) return -1;
  if (slot.index < 0 || slot.index >= slot.count) return -1;
  return pool[static_cast<std::size_t>(slot.index)];
}

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> out;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view part = text.substr(pos, comma - pos);
    pos = comma + 1;
    int lo = -1, hi = -1;
    const std::size_t dash = part.find('-');
    const auto num = [](std::string_view s, int& v) {
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && end == s.data() + s.size() && v >= 0 && v < CPU_SETSIZE;
    };
    if (!num(part.substr(0, dash), lo) || !num(dash == std::string_view::npos ? part : part.substr(dash + 1), hi) ||
        hi < lo)
      return {};
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

PinnedCpu::PinnedCpu(const CpuSlot& slot) {
  if (slot.count < 1) return;
  if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &saved_)) allowed.push_back(c);
  const int cpu = cpu_for_slot(allowed, slot);
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) == 0) cpu_ = cpu;
}

PinnedCpu::~PinnedCpu() {
  if (cpu_ >= 0) sched_setaffinity(0, sizeof(saved_), &saved_);
}

}  // namespace fb
