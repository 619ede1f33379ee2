// NVLink links per GPU (NVML), their aggregate bandwidth, and the GPU<->GPU
// matrix of a node in the words of `nvidia-smi topo -m`.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "fabricbench/topo/spec.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

std::string peer_name(Nvml& nvml, unsigned gpu, unsigned link, const std::vector<std::string>& gpu_bus_ids) {
  const auto remote = nvml.nvlink_remote_bus_id(gpu, link);
  const auto bus = remote ? sysfs_bus_id(*remote) : Fact<std::string>::unknown(remote.why());
  if (bus) {
    const auto it = std::find(gpu_bus_ids.begin(), gpu_bus_ids.end(), *bus);
    if (it != gpu_bus_ids.end()) return fmt::format("GPU{}", it - gpu_bus_ids.begin());
  }
  const auto type = nvml.nvlink_remote_type(gpu, link);
  if (type && *type == NvLinkEnd::nvswitch) return "NVSwitch";
  if (bus) return *bus;
  return "unknown";
}

// The generation: the chip fixes it; NVML's per-link version is the fallback
// (some drivers report NVLink4 links of Hopper GPUs as version 5.0).
Fact<int> generation(Nvml& nvml, unsigned gpu, unsigned first_active, const Fact<unsigned>& arch) {
  if (arch) {
    const auto g = nvlink_generation_of_arch(*arch);
    if (g) return g;
  }
  const auto v = nvml.nvlink_version(gpu, first_active);
  if (!v) return Fact<int>::unknown(v.why());
  return nvlink_generation_of_nvml_version(*v);
}

int links_to(const NvLinks& l, const std::string& peer) {
  for (const auto& p : l.peers)
    if (p.peer == peer) return p.links;
  return 0;
}

}  // namespace

Fact<double> NvLinks::per_link_gbps() const {
  if (!generation) return Fact<double>::unknown(generation.why());
  return nvlink_link_gbps(*generation);
}

Fact<double> NvLinks::total_gbps() const {
  if (active == 0) return Fact<double>::unknown("no active NVLink links");
  const auto per = per_link_gbps();
  if (!per) return per;
  return *per * active;
}

NvLinks read_nvlinks(Nvml& nvml, unsigned gpu, const Fact<unsigned>& arch,
                     const std::vector<std::string>& gpu_bus_ids) {
  NvLinks l;
  if (const auto why = nvml.unavailable_reason(); !why.empty()) {
    l.present = Fact<int>::unknown(why);
    l.generation = Fact<int>::unknown(why);
    return l;
  }
  int present = 0;
  int first_active = -1;
  std::map<std::string, int> peers;
  for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
    const auto active = nvml.nvlink_active(gpu, link);
    if (!active) continue;  // no such link on this GPU (NVML: not supported / invalid argument)
    ++present;
    if (!*active) {
      l.down.push_back(static_cast<int>(link));
      continue;
    }
    ++l.active;
    if (first_active < 0) first_active = static_cast<int>(link);
    ++peers[peer_name(nvml, gpu, link, gpu_bus_ids)];
  }
  l.present = present;
  for (const auto& [peer, n] : peers) l.peers.push_back({peer, n});
  l.generation = first_active < 0 ? Fact<int>::unknown("no active NVLink links")
                                  : generation(nvml, gpu, static_cast<unsigned>(first_active), arch);
  return l;
}

std::vector<std::string> nvlink_flags(const NvLinks& l) {
  // A GPU with no active link has no NVLink in use (a PCIe card without its
  // bridge); some links active and some not is a fault.
  if (l.active == 0 || l.down.empty()) return {};
  std::string list;
  for (int d : l.down) list += (list.empty() ? "" : ", ") + std::to_string(d);
  return {fmt::format("NVLink: {} of {} links down (link {})", l.down.size(),
                      l.active + static_cast<int>(l.down.size()), list)};
}

std::string nvlink_text(const NvLinks& l) {
  return fmt::format("NVLink{} x{}", l.generation ? std::to_string(*l.generation) : "?", l.active);
}

std::vector<std::vector<std::string>> gpu_matrix(const std::vector<Gpu>& gpus) {
  const std::size_t n = gpus.size();
  std::vector<std::vector<std::string>> m(n, std::vector<std::string>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        m[i][j] = "X";
        continue;
      }
      const auto& a = gpus[i];
      const auto& b = gpus[j];
      // Direct links, or both GPUs on NVSwitches (every pair then gets the
      // smaller GPU's switch links, as nvidia-smi shows NV18 on HGX H100).
      int nv = links_to(a.nvlink, fmt::format("GPU{}", b.index));
      if (nv == 0) nv = std::min(links_to(a.nvlink, "NVSwitch"), links_to(b.nvlink, "NVSwitch"));
      if (nv > 0) {
        m[i][j] = fmt::format("NV{}", nv);
      } else if (a.place && b.place) {
        m[i][j] = std::string(name(pci_distance(*a.place, *b.place)));
      } else {
        m[i][j] = "?";
      }
    }
  }
  return m;
}

}  // namespace fb::topo
