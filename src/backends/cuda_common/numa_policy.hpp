// Memory placement for pinned host buffers: on the NUMA node of the GPU
// they feed, not wherever the rank's thread runs, so host<->device copies on
// a GPU of the far socket are not measured through the socket link. Plain
// C++ (Linux set_mempolicy), tested on any machine.
#pragma once

#include <string>
#include <vector>

namespace fb::gpu {

// While it lives, this thread's new pages come preferably from `node`
// (MPOL_PREFERRED: another node when that one is full, never a failure);
// nothing when node < 0. The previous policy is put back after.
class PreferNumaNode {
 public:
  explicit PreferNumaNode(int node);
  ~PreferNumaNode();
  PreferNumaNode(const PreferNumaNode&) = delete;
  PreferNumaNode& operator=(const PreferNumaNode&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  int previous_mode_ = 0;
  unsigned long previous_mask_[16] = {};
};

// This thread's policy now, as "default", "preferred 1", "bind 0-1"... (for tests).
std::string current_numa_policy();

// The NUMA node of the PCI device `bus_id` ("0000:1B:00.0", any case) under
// sysfs `root`; -1 when the kernel does not say (one-node machines say -1).
int numa_node_of_pci(const std::string& root, const std::string& bus_id);

// The CPUs next to that device (sysfs local_cpulist), ascending; empty when
// the kernel does not say.
std::vector<int> local_cpus_of_pci(const std::string& root, const std::string& bus_id);

}  // namespace fb::gpu
