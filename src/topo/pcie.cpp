// A device's PCIe link from sysfs, its spec peak, and the flags for links
// trained below what the device and its slot allow.
#include <fmt/format.h>

#include <algorithm>

#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/spec.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

Fact<int> read_gen(const Sysfs& sysfs, const std::string& dev, const char* file) {
  const auto speed = sysfs.read(dev + "/" + file);
  if (!speed) return Fact<int>::unknown(speed.why());
  return pcie_gen_from_speed(*speed);
}

Fact<int> read_width(const Sysfs& sysfs, const std::string& dev, const char* file) {
  const auto w = sysfs.read_int(dev + "/" + file);
  if (!w) return Fact<int>::unknown(w.why());
  if (*w < 1 || *w > 32) return Fact<int>::unknown(fmt::format("{}/{} is {}: no link", dev, file, *w));
  return static_cast<int>(*w);
}

Fact<int> smaller(const Fact<int>& device, const Fact<int>& port) {
  if (!device || !port) return device;  // no upstream port to limit it (or unreadable): the device's own
  return std::min(*device, *port);
}

}  // namespace

Fact<double> PcieLink::peak_gbps() const {
  if (!max_gen) return Fact<double>::unknown(max_gen.why());
  if (!max_width) return Fact<double>::unknown(max_width.why());
  return pcie_peak_gbps(*max_gen, *max_width);
}

PcieLink read_pcie_link(const Sysfs& sysfs, const std::string& bus_id) {
  PcieLink link;
  link.source = "sysfs";
  const std::string dev = "sys/bus/pci/devices/" + bus_id;
  link.gen = read_gen(sysfs, dev, "current_link_speed");
  link.width = read_width(sysfs, dev, "current_link_width");
  link.device_max_gen = read_gen(sysfs, dev, "max_link_speed");
  const Fact<int> device_max_width = read_width(sysfs, dev, "max_link_width");
  // The link can run no faster than the port above it (the slot) allows.
  const auto place = pci_place_of_bus_id(sysfs, bus_id);
  Fact<int> port_gen = Fact<int>::unknown("no upstream port");
  Fact<int> port_width = Fact<int>::unknown("no upstream port");
  if (place && !place->bridges.empty()) {
    const std::string port = "sys/bus/pci/devices/" + place->bridges.back();
    port_gen = read_gen(sysfs, port, "max_link_speed");
    port_width = read_width(sysfs, port, "max_link_width");
  }
  link.max_gen = smaller(link.device_max_gen, port_gen);
  link.max_width = smaller(device_max_width, port_width);
  return believable_max(link);
}

PcieLink believable_max(PcieLink l) {
  // A link trained faster or wider than its stated maximum proves the
  // maximum wrong (a virtual machine's emulated root port can state less than
  // the real link runs): the trained link is the lower bound.
  if (l.gen && l.max_gen && *l.gen > *l.max_gen) l.max_gen = l.gen;
  if (l.width && l.max_width && *l.width > *l.max_width) l.max_width = l.width;
  return l;
}

std::string pcie_text(const Fact<int>& gen, const Fact<int>& width) {
  return fmt::format("Gen{} x{}", gen ? std::to_string(*gen) : "?", width ? std::to_string(*width) : "?");
}

std::vector<std::string> pcie_flags(const PcieLink& l, const Fact<unsigned>& pstate) {
  std::vector<std::string> flags;
  if (l.gen && l.width && l.max_gen && l.max_width) {
    const std::string running =
        fmt::format("PCIe running {} of {}", pcie_text(l.gen, l.width), pcie_text(l.max_gen, l.max_width));
    if (*l.width < *l.max_width) {
      flags.push_back(running);  // lanes do not come back by themselves: a real fault
    } else if (*l.gen < *l.max_gen) {
      // GPUs lower the link speed in idle power states; only at full speed
      // (P0) is a slow link a fault.
      if (!pstate) {
        flags.push_back(running + " (power state unknown: an idle GPU lowers its link speed; re-check under load)");
      } else if (*pstate == 0) {
        flags.push_back(running);
      }
    }
  }
  if (l.device_max_gen && l.max_gen && *l.device_max_gen > *l.max_gen)
    flags.push_back(fmt::format("PCIe slot allows Gen{}, the device supports Gen{}", *l.max_gen, *l.device_max_gen));
  return flags;
}

}  // namespace fb::topo
