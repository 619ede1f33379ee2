#include "numa_policy.hpp"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include "fabricbench/core/cpu_pin.hpp"
#include "fabricbench/topo/sysfs.hpp"

namespace fb::gpu {
namespace {

constexpr unsigned long kMaskBits = 16 * 8 * sizeof(unsigned long);

long set_policy(int mode, const unsigned long* mask, unsigned long bits) {
  return ::syscall(SYS_set_mempolicy, mode, mask, bits);
}

long get_policy(int* mode, unsigned long* mask, unsigned long bits) {
  return ::syscall(SYS_get_mempolicy, mode, mask, bits, nullptr, 0UL);
}

}  // namespace

PreferNumaNode::PreferNumaNode(int node) {
  if (node < 0 || static_cast<unsigned long>(node) >= kMaskBits) return;
  if (get_policy(&previous_mode_, previous_mask_, kMaskBits) != 0) return;
  unsigned long mask[16] = {};
  mask[node / (8 * sizeof(unsigned long))] = 1UL << (node % (8 * sizeof(unsigned long)));
  active_ = set_policy(MPOL_PREFERRED, mask, kMaskBits) == 0;
}

PreferNumaNode::~PreferNumaNode() {
  if (!active_) return;
  // MPOL_DEFAULT takes no nodes; the other modes get their own mask back.
  if (previous_mode_ == MPOL_DEFAULT)
    set_policy(MPOL_DEFAULT, nullptr, 0);
  else
    set_policy(previous_mode_, previous_mask_, kMaskBits);
}

std::string current_numa_policy() {
  int mode = 0;
  unsigned long mask[16] = {};
  if (get_policy(&mode, mask, kMaskBits) != 0) return "unknown";
  if (mode == MPOL_DEFAULT) return "default";
  std::string nodes;
  for (unsigned long n = 0; n < kMaskBits; ++n)
    if (mask[n / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long))) & 1UL)
      nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
  const char* name = mode == MPOL_PREFERRED ? "preferred" : mode == MPOL_BIND ? "bind" : "other";
  return fmt::format("{} {}", name, nodes);
}

int numa_node_of_pci(const std::string& root, const std::string& bus_id) {
  const auto id = topo::sysfs_bus_id(bus_id);
  if (!id) return -1;
  const auto place = topo::pci_place_of_bus_id(topo::Sysfs(root), *id);
  return place && place->numa_node ? *place->numa_node : -1;
}

std::vector<int> local_cpus_of_pci(const std::string& root, const std::string& bus_id) {
  const auto id = topo::sysfs_bus_id(bus_id);
  if (!id) return {};
  const auto list = topo::Sysfs(root).read("sys/bus/pci/devices/" + *id + "/local_cpulist");
  return list ? parse_cpu_list(*list) : std::vector<int>{};
}

}  // namespace fb::gpu
