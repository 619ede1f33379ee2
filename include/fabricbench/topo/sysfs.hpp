// sysfs under a root folder ("/" on a machine, a fixture tree in tests), and
// the PCI tree read from it: where a device sits (host bridge, bridges down
// to it, NUMA node) and how far apart two devices are, in the words of
// `nvidia-smi topo -m` (PIX, PXB, PHB, NODE, SYS).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/topo/fact.hpp"

namespace fb::topo {

class Sysfs {
 public:
  explicit Sysfs(std::filesystem::path root = "/");
  const std::filesystem::path& root() const { return root_; }

  // The file's text without trailing white space; unknown when missing or
  // unreadable, with the path and the system's reason.
  Fact<std::string> read(std::string_view rel) const;
  // A decimal integer file ("16", "-1"); unknown when it does not parse.
  Fact<long> read_int(std::string_view rel) const;
  // Entry names of a folder, sorted; empty when it is missing.
  std::vector<std::string> list(std::string_view rel) const;
  // Follows symbolic links: the real path of `rel`, relative to the root
  // ("sys/devices/pci0000:17/0000:17:01.0/..."); unknown when it leads nowhere.
  Fact<std::string> resolve(std::string_view rel) const;
  bool exists(std::string_view rel) const;

 private:
  std::filesystem::path root_;
};

// "0000:19:00.0" (sysfs: four-digit domain, lower case) from NVML's
// "00000000:19:00.0"; unknown when it is not a PCI address.
Fact<std::string> sysfs_bus_id(std::string_view any_bus_id);
bool is_bus_id(std::string_view text);

// Where a PCI device sits.
struct PciPlace {
  std::string bus_id;                // the device itself
  std::string host_bridge;           // "pci0000:17": the root complex
  std::vector<std::string> bridges;  // bus ids from the root port down to the device's parent
  Fact<int> numa_node;               // unknown when the kernel says -1
};

// The place of the PCI device at `device_path` (relative to the root, links
// followed), or of the nearest PCI device above it (a virtio or netdev folder).
Fact<PciPlace> pci_place_of_path(const Sysfs& sysfs, std::string_view device_path);
Fact<PciPlace> pci_place_of_bus_id(const Sysfs& sysfs, std::string_view bus_id);

// Distance between two PCI devices, nearest first:
//   pix   behind one PCIe switch (the same downstream ports' switch)
//   pxb   behind several PCIe switches, without crossing the host bridge
//   phb   through one host bridge (root complex)
//   node  through several host bridges of one NUMA node
//   sys   across the link between CPU sockets (NUMA nodes)
enum class PciDistance { pix, pxb, phb, node, sys };
PciDistance pci_distance(const PciPlace& a, const PciPlace& b);
std::string_view name(PciDistance distance);  // "PIX", "PXB", "PHB", "NODE", "SYS"

}  // namespace fb::topo
