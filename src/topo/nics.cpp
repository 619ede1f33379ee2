// NICs: RDMA ports from /sys/class/infiniband (InfiniBand, RoCE when the
// link layer is Ethernet, EFA by its driver) and Ethernet interfaces from
// /sys/class/net.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "fabricbench/topo/spec.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

constexpr long kArphrdEther = 1;  // /sys/class/net/*/type (linux/if_arp.h)

// "4: ACTIVE" -> "ACTIVE": the kernel writes the number and its name.
Fact<std::string> state_name(const Fact<std::string>& raw) {
  if (!raw) return raw;
  const auto colon = raw->find(": ");
  return colon == std::string::npos ? *raw : raw->substr(colon + 2);
}

Fact<std::string> driver_of(const Sysfs& sysfs, const std::string& device_link) {
  const auto real = sysfs.resolve(device_link + "/driver");
  if (!real) return Fact<std::string>::unknown(real.why());
  return std::filesystem::path(*real).filename().string();
}

Nic rdma_port(const Sysfs& sysfs, const std::string& dev, const std::string& port) {
  const std::string base = "sys/class/infiniband/" + dev;
  const std::string p = base + "/ports/" + port;
  Nic n;
  n.name = dev + ":" + port;
  n.state = state_name(sysfs.read(p + "/state"));
  n.up = n.state && *n.state == "ACTIVE";
  n.phys_state = state_name(sysfs.read(p + "/phys_state"));
  n.link_layer = sysfs.read(p + "/link_layer");
  n.driver = driver_of(sysfs, base + "/device");
  // AWS's Elastic Fabric Adapter is an RDMA device whose link layer the
  // kernel reports as "Unknown" (rdma-core PR #884): its driver names it.
  const bool efa = n.driver && *n.driver == "efa";
  n.kind = efa                             ? "EFA"
           : !n.link_layer                 ? "unknown"
           : *n.link_layer == "InfiniBand" ? "IB"
           : *n.link_layer == "Ethernet"   ? "RoCE"
                                           : "unknown";
  n.rate = sysfs.read(p + "/rate");
  if (n.rate) {
    const auto parsed = parse_ib_rate(*n.rate);
    n.rate_gbit = parsed ? Fact<double>(parsed->gbit) : Fact<double>::unknown(parsed.why());
  } else {
    n.rate_gbit = Fact<double>::unknown(n.rate.why());
  }
  n.firmware = sysfs.read(base + "/fw_ver");
  n.netdevs = sysfs.list(base + "/device/net");
  if (n.kind == "RoCE" && !n.netdevs.empty()) {
    const auto mtu = sysfs.read_int("sys/class/net/" + n.netdevs.front() + "/mtu");
    n.mtu_bytes = mtu ? Fact<int>(static_cast<int>(*mtu)) : Fact<int>::unknown(mtu.why());
  } else {
    n.mtu_bytes = Fact<int>::unknown(n.kind == "IB" || n.kind == "EFA"
                                         ? "the " + n.kind + " port MTU is not in sysfs (ibv_devinfo shows it)"
                                         : "no network interface on this port's PCI function");
  }
  n.place = pci_place_of_path(sysfs, base + "/device");
  if (!n.up) {
    n.flags.push_back(fmt::format("port {} (physical state {})", n.state ? *n.state : "state unknown",
                                  n.phys_state ? *n.phys_state : "unknown"));
  }
  return n;
}

Fact<double> ethernet_speed(const Sysfs& sysfs, const std::string& ifname) {
  const std::string file = "sys/class/net/" + ifname + "/speed";
  const auto mbit = sysfs.read_int(file);
  if (!mbit)
    return Fact<double>::unknown(
        fmt::format("speed unreadable ({}): the link is down or the driver reports none", mbit.why()));
  if (*mbit <= 0)
    return Fact<double>::unknown(fmt::format(
        "{}/speed reads {}: the driver reports no link speed (as virtual NICs such as virtio do)", ifname, *mbit));
  return static_cast<double>(*mbit) / 1000.0;  // Mb/s -> Gb/s
}

// A physical (or paravirtual) Ethernet interface; nothing for loopback,
// bridges, veth pairs and other software interfaces, or IPoIB (its port is
// listed as an RDMA port).
std::optional<Nic> ethernet(const Sysfs& sysfs, const std::string& ifname) {
  const std::string base = "sys/class/net/" + ifname;
  const auto real = sysfs.resolve(base);
  if (!real || real->find("/virtual/") != std::string::npos) return std::nullopt;
  const auto type = sysfs.read_int(base + "/type");
  if (!type || *type != kArphrdEther) return std::nullopt;
  Nic n;
  n.name = ifname;
  n.kind = "Ethernet";
  n.state = sysfs.read(base + "/operstate");
  n.up = n.state && *n.state == "up";
  n.rate_gbit = ethernet_speed(sysfs, ifname);
  const auto mtu = sysfs.read_int(base + "/mtu");
  n.mtu_bytes = mtu ? Fact<int>(static_cast<int>(*mtu)) : Fact<int>::unknown(mtu.why());
  n.driver = driver_of(sysfs, base + "/device");
  n.firmware = Fact<std::string>::unknown("Ethernet firmware is not in sysfs (ethtool -i shows it)");
  n.place = pci_place_of_path(sysfs, base);
  return n;
}

// An active port slower than the fastest active port of its kind on the
// node: trained down, or a different card.
void flag_slow_ports(std::vector<Nic>& nics) {
  std::map<std::string, double> fastest;
  for (const auto& n : nics)
    if (n.up && n.kind != "Ethernet" && n.rate_gbit) fastest[n.kind] = std::max(fastest[n.kind], *n.rate_gbit);
  for (auto& n : nics)
    if (n.up && n.kind != "Ethernet" && n.rate_gbit && *n.rate_gbit < fastest[n.kind])
      n.flags.push_back(fmt::format("running {} where other {} ports run {}", format_gbit(*n.rate_gbit), n.kind,
                                    format_gbit(fastest[n.kind])));
}

}  // namespace

std::vector<Nic> read_nics(const Sysfs& sysfs) {
  std::vector<Nic> nics;
  for (const auto& dev : sysfs.list("sys/class/infiniband"))
    for (const auto& port : sysfs.list("sys/class/infiniband/" + dev + "/ports"))
      nics.push_back(rdma_port(sysfs, dev, port));
  flag_slow_ports(nics);
  for (const auto& ifname : sysfs.list("sys/class/net"))
    if (auto n = ethernet(sysfs, ifname)) nics.push_back(std::move(*n));
  return nics;
}

void add_gpu_distances(std::vector<Nic>& nics, const std::vector<Gpu>& gpus) {
  for (auto& n : nics) {
    n.gpu_distance.clear();
    for (const auto& g : gpus)
      n.gpu_distance.emplace_back(fmt::format("GPU{}", g.index),
                                  n.place && g.place ? std::string(name(pci_distance(*n.place, *g.place))) : "?");
  }
}

}  // namespace fb::topo
