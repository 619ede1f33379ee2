#include "fabricbench/core/cpu_pin.hpp"

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

CpuSlot cpu_slot(const Comm& world) {
  const std::vector<std::string> ids = world.allgather_strings(machine_id());
  return cpu_slot_of(ids, world.rank());
}

int cpu_for_slot(std::span<const int> allowed, CpuSlot slot) {
  if (slot.count < 2 || allowed.size() < 2 || allowed.size() < static_cast<std::size_t>(slot.count)) return -1;
  if (slot.index < 0 || slot.index >= slot.count) return -1;
  return allowed[static_cast<std::size_t>(slot.index)];
}

PinnedCpu::PinnedCpu(CpuSlot slot) {
  if (slot.count < 2) return;
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
