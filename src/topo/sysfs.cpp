#include "fabricbench/topo/sysfs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace fb::topo {

namespace fs = std::filesystem;

Sysfs::Sysfs(fs::path root) : root_(std::move(root)) {}

Fact<std::string> Sysfs::read(std::string_view rel) const {
  // POSIX reads, not streams: a sysfs attribute whose driver cannot answer
  // (the speed of a virtual or down NIC) opens fine and then fails read()
  // with EINVAL, and that reason is worth keeping.
  // O_NONBLOCK and the regular-file test: a FIFO or device planted in a
  // --sysfs-root tree would otherwise block the open or the read for ever.
  const fs::path p = root_ / rel;
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return Fact<std::string>::unknown(fmt::format("{}: {}", p.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    ::close(fd);
    return Fact<std::string>::unknown(
        fmt::format("{}: a FIFO, socket or device, not a sysfs attribute: not read", p.string()));
  }
  std::string s;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Fact<std::string>::unknown(fmt::format("{}: {}", p.string(), std::strerror(err)));
    }
    s.append(buf, static_cast<std::size_t>(n));
    if (s.size() > (1u << 20)) break;  // no sysfs attribute is this long
  }
  ::close(fd);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

Fact<long> Sysfs::read_int(std::string_view rel) const {
  const auto text = read(rel);
  if (!text) return Fact<long>::unknown(text.why());
  long v = 0;
  const char* first = text->data();
  const char* last = first + text->size();
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || text->empty())
    return Fact<long>::unknown(fmt::format("{}: '{}' is not a whole number", (root_ / rel).string(), *text));
  return v;
}

std::vector<std::string> Sysfs::list(std::string_view rel) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root_ / rel, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Fact<std::string> Sysfs::resolve(std::string_view rel) const {
  std::error_code ec;
  const fs::path real = fs::canonical(root_ / rel, ec);
  if (ec) return Fact<std::string>::unknown(fmt::format("{}: {}", (root_ / rel).string(), ec.message()));
  const fs::path root = fs::canonical(root_, ec);
  if (ec) return Fact<std::string>::unknown(fmt::format("{}: {}", root_.string(), ec.message()));
  const fs::path inside = real.lexically_relative(root);
  if (inside.empty() || *inside.begin() == "..")
    return Fact<std::string>::unknown(fmt::format("{} leads outside {}", (root_ / rel).string(), root_.string()));
  return inside.string();
}

bool Sysfs::exists(std::string_view rel) const {
  std::error_code ec;
  return fs::exists(root_ / rel, ec);
}

bool is_bus_id(std::string_view t) {
  // DOMAIN:BB:DD.F, the domain four hex digits or more (Intel VMD domains
  // read 10000 and up), then hex digits in the right places.
  const auto colon = t.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8 || t.size() != colon + 8) return false;
  const std::string_view rest = t.substr(colon);  // ":BB:DD.F"
  if (rest[3] != ':' || rest[6] != '.' || rest[7] < '0' || rest[7] > '7') return false;
  for (std::size_t i = 0; i < t.size() - 1; ++i)
    if (i != colon && i != colon + 3 && i != colon + 6 && !std::isxdigit(static_cast<unsigned char>(t[i])))
      return false;
  return true;
}

Fact<std::string> sysfs_bus_id(std::string_view any) {
  // NVML writes an eight-digit domain ("00000000:19:00.0"), the kernel at
  // least four ("0000:19:00.0", "10000:e0:00.0"): drop the extra zeros.
  std::string s(any);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (s.find(':') != std::string::npos && s.find(':') > 4 && s.front() == '0') s.erase(0, 1);
  if (!is_bus_id(s)) return Fact<std::string>::unknown(fmt::format("'{}' is not a PCI address", any));
  return s;
}

Fact<PciPlace> pci_place_of_path(const Sysfs& sysfs, std::string_view device_path) {
  const auto real = sysfs.resolve(device_path);
  if (!real) return Fact<PciPlace>::unknown(real.why());
  // sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/.../virtio2/net/eth0:
  // the root complex, then PCI functions down to the device; anything after
  // the last PCI function (virtio, net) belongs to that function.
  PciPlace p;
  std::string pci_path;
  std::string walked;
  std::vector<std::string> chain;
  for (const auto& part : fs::path(*real)) {
    const std::string name = part.string();
    walked = walked.empty() ? name : walked + "/" + name;
    if (name.starts_with("pci") && name.find(':') != std::string::npos && p.host_bridge.empty()) {
      p.host_bridge = name;
    } else if (!p.host_bridge.empty() && is_bus_id(name)) {
      chain.push_back(name);
      pci_path = walked;
    } else if (!p.host_bridge.empty() && !chain.empty()) {
      break;  // below the last PCI function
    }
  }
  if (chain.empty()) return Fact<PciPlace>::unknown(fmt::format("{} is not on a PCI bus ({})", device_path, *real));
  p.bus_id = chain.back();
  chain.pop_back();
  p.bridges = std::move(chain);
  const auto numa = sysfs.read_int(pci_path + "/numa_node");
  if (!numa) {
    p.numa_node = Fact<int>::unknown(numa.why());
  } else if (*numa < 0) {
    p.numa_node =
        Fact<int>::unknown(fmt::format("{}/numa_node is {}: the firmware names no NUMA node", p.bus_id, *numa));
  } else {
    p.numa_node = static_cast<int>(*numa);
  }
  return p;
}

Fact<PciPlace> pci_place_of_bus_id(const Sysfs& sysfs, std::string_view bus_id) {
  return pci_place_of_path(sysfs, fmt::format("sys/bus/pci/devices/{}", bus_id));
}

PciDistance pci_distance(const PciPlace& a, const PciPlace& b) {
  if (a.host_bridge != b.host_bridge) {
    // Both unknown: the kernel knows one NUMA domain only, so no socket link
    // can lie between them.
    const bool same_numa =
        a.numa_node.known() == b.numa_node.known() && (!a.numa_node.known() || *a.numa_node == *b.numa_node);
    return same_numa ? PciDistance::node : PciDistance::sys;
  }
  std::size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() && a.bridges[common] == b.bridges[common]) ++common;
  if (common == 0) return PciDistance::phb;  // different root ports of one host bridge
  // Below a shared bridge, each side adds at most its switch's downstream
  // port: one switch. More bridges on a side: a switch behind a switch.
  const std::size_t below_a = a.bridges.size() - common;
  const std::size_t below_b = b.bridges.size() - common;
  return below_a <= 1 && below_b <= 1 ? PciDistance::pix : PciDistance::pxb;
}

std::string_view name(PciDistance d) {
  switch (d) {
    case PciDistance::pix:
      return "PIX";
    case PciDistance::pxb:
      return "PXB";
    case PciDistance::phb:
      return "PHB";
    case PciDistance::node:
      return "NODE";
    case PciDistance::sys:
      return "SYS";
  }
  return "?";
}

}  // namespace fb::topo
