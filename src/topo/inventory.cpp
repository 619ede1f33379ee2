// One rank's inventory: the readers put together, the rank's GPU, the rails.
#include "fabricbench/topo/inventory.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "topo_internal.hpp"

namespace fb::topo {
namespace {

constexpr std::array kDistances{PciDistance::pix, PciDistance::pxb, PciDistance::phb, PciDistance::node,
                                PciDistance::sys};

bool rdma_up(const Nic& n) { return n.up && (n.kind == "IB" || n.kind == "RoCE" || n.kind == "EFA"); }

bool is_index(const std::string& entry, int& index) {
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
  return ec == std::errc() && end == entry.data() + entry.size();
}

// The GPUs' indices (NVML's, PCI order) in the order CUDA numbers them.
// With CUDA_DEVICE_ORDER=PCI_BUS_ID that is PCI bus order. CUDA's default,
// FASTEST_FIRST, puts the GPU it guesses fastest first (CUDA C Programming
// Guide, "CUDA Environment Variables"); GPUs of one model tie and stay in PCI
// order, but on a node of mixed GPUs the numbering is CUDA's guess.
Fact<std::vector<int>> cuda_order(const std::vector<Gpu>& gpus, const std::optional<std::string>& device_order) {
  std::vector<const Gpu*> by_bus;
  for (const Gpu& g : gpus) by_bus.push_back(&g);
  std::stable_sort(by_bus.begin(), by_bus.end(), [](const Gpu* a, const Gpu* b) {
    return a->bus_id && b->bus_id ? *a->bus_id < *b->bus_id : a->index < b->index;
  });
  std::vector<int> order;
  for (const Gpu* g : by_bus) order.push_back(g->index);
  if (device_order == "PCI_BUS_ID") return order;
  // One model: NVML's name, or without NVML the reason, which names the PCI device id (gpus.cpp).
  const auto model = [](const Gpu& g) { return g.model ? *g.model : g.model.why(); };
  for (const Gpu& g : gpus)
    if (model(g) != model(gpus.front()))
      return Fact<std::vector<int>>::unknown(
          fmt::format("CUDA_DEVICE_ORDER is {} on a node of mixed GPUs: CUDA numbers the one it guesses "
                      "fastest first, so its indices may not be PCI order; set CUDA_DEVICE_ORDER=PCI_BUS_ID",
                      device_order ? *device_order : "unset (FASTEST_FIRST)"));
  return order;
}

// The GPU whose UUID starts with `entry` ("GPU-8c1c"), or -1: a prefix two
// GPUs share names neither (CUDA asks for enough digits to pick out one GPU,
// and takes an ambiguous entry as one that names no GPU).
int gpu_by_uuid(const std::vector<Gpu>& gpus, const std::string& entry) {
  if (!entry.starts_with("GPU-")) return -1;
  int found = -1;
  for (const Gpu& g : gpus) {
    if (!g.uuid || !g.uuid->starts_with(entry)) continue;
    if (found >= 0) return -1;
    found = g.index;
  }
  return found;
}

// CUDA's numbering of the visible GPUs: indices (in CUDA's order) or UUID
// prefixes, read up to the first entry that names no GPU or more than one
// (CUDA ignores the rest).
Fact<std::vector<int>> visible_gpus(const std::vector<Gpu>& gpus, const std::string& list,
                                    const Fact<std::vector<int>>& order) {
  std::vector<int> visible;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    const std::string entry = list.substr(start, comma - start);
    start = comma + 1;
    int index = -1;
    if (is_index(entry, index)) {
      if (index < 0 || index >= static_cast<int>(gpus.size())) break;
      if (!order) return Fact<std::vector<int>>::unknown(fmt::format("CUDA_VISIBLE_DEVICES={}: {}", list, order.why()));
      visible.push_back((*order)[static_cast<std::size_t>(index)]);
      continue;
    }
    const int gpu = gpu_by_uuid(gpus, entry);
    if (gpu < 0) break;
    visible.push_back(gpu);
  }
  return visible;
}

// NICs left over once each GPU has one, behind the same PCIe switch as a
// GPU, join that GPU's rail: a p5 node has four EFA devices per GPU and
// NCCL's network plugin drives them all from it.
void add_switch_mates(std::vector<Rail>& rails, const std::vector<Gpu>& gpus, const std::vector<Nic>& nics,
                      std::vector<bool>& taken) {
  for (std::size_t k = 0; k < nics.size(); ++k) {
    if (taken[k] || !rdma_up(nics[k]) || !nics[k].place) continue;
    for (auto& r : rails) {
      const auto g = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& x) { return x.index == r.gpu; });
      if (g == gpus.end() || !g->place) continue;
      const auto d = pci_distance(*g->place, *nics[k].place);
      if (d != PciDistance::pix && d != PciDistance::pxb) continue;
      r.nics.push_back(nics[k].name);
      taken[k] = true;
      break;
    }
  }
}

}  // namespace

CudaView CudaView::from_environment(int device_option) {
  CudaView v;
  if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES")) v.visible_devices = cvd;
  if (const char* order = std::getenv("CUDA_DEVICE_ORDER")) v.device_order = order;
  v.device_option = device_option;
  return v;
}

Fact<int> pick_rank_gpu(const std::vector<Gpu>& gpus, int local_rank, const CudaView& view) {
  if (gpus.empty()) return Fact<int>::unknown("no GPU on this node");
  const Fact<std::vector<int>> order = cuda_order(gpus, view.device_order);
  const Fact<std::vector<int>> visible =
      view.visible_devices ? visible_gpus(gpus, *view.visible_devices, order) : order;
  if (!visible) return Fact<int>::unknown(visible.why());
  if (visible->empty())
    return Fact<int>::unknown(fmt::format("CUDA_VISIBLE_DEVICES='{}' leaves no GPU visible", *view.visible_devices));
  // As the GPU backends place a rank (placement_rules.hpp, choose_device).
  if (view.device_option >= static_cast<int>(visible->size()))
    return Fact<int>::unknown(fmt::format("--device {}: {} GPU(s) visible", view.device_option, visible->size()));
  const int at = view.device_option >= 0 ? view.device_option : local_rank % static_cast<int>(visible->size());
  return (*visible)[static_cast<std::size_t>(at)];
}

std::vector<Rail> name_rails(const std::vector<Gpu>& gpus, const std::vector<Nic>& nics) {
  // Nearest first, one NIC per GPU while there are enough (GPU k and the k-th
  // NIC behind the same switch); GPUs left over share their nearest NIC.
  std::vector<Rail> rails;
  std::vector<bool> taken(nics.size(), false);
  std::vector<bool> placed(gpus.size(), false);
  for (bool share : {false, true}) {
    for (const auto level : kDistances) {
      for (std::size_t g = 0; g < gpus.size(); ++g) {
        if (placed[g] || !gpus[g].place) continue;
        for (std::size_t k = 0; k < nics.size(); ++k) {
          if ((taken[k] && !share) || !rdma_up(nics[k]) || !nics[k].place) continue;
          if (pci_distance(*gpus[g].place, *nics[k].place) != level) continue;
          rails.push_back({gpus[g].index, {nics[k].name}, std::string(name(level))});
          taken[k] = placed[g] = true;
          break;
        }
      }
    }
  }
  add_switch_mates(rails, gpus, nics, taken);
  std::sort(rails.begin(), rails.end(), [](const Rail& a, const Rail& b) { return a.gpu < b.gpu; });
  return rails;
}

Software read_software(Nvml& nvml, const LinkedVersions& linked) {
  Software s;
  s.driver = nvml.driver_version();
  s.nvml = nvml.nvml_version();
  const auto cuda = nvml.cuda_driver_version();
  s.cuda_driver = cuda ? Fact<std::string>(cuda_version_text(*cuda)) : linked.cuda_driver;
  if (!cuda && !linked.cuda_driver)
    s.cuda_driver = Fact<std::string>::unknown(fmt::format("{}; {}", cuda.why(), linked.cuda_driver.why()));
  s.cuda_runtime = linked.cuda_runtime;
  s.nccl = linked.nccl;
  return s;
}

std::string cpu_list_text(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return out;
}

Fact<std::string> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return Fact<std::string>::unknown(fmt::format("sched_getaffinity: {}", std::strerror(errno)));
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpu_list_text(std::move(cpus));
}

Inventory read_inventory(const Sysfs& sysfs, Nvml& nvml, const LinkedVersions& linked, const RankPlace& place,
                         const CudaView& cuda) {
  Inventory inv;
  inv.place = place;
  inv.software = read_software(nvml, linked);
  inv.gpus_note = nvml.unavailable_reason();
  inv.gpus = read_gpus(sysfs, nvml, place.job_pids);
  inv.rank_gpu = pick_rank_gpu(inv.gpus, place.local_rank, cuda);
  inv.gpu_matrix = gpu_matrix(inv.gpus);
  inv.nics = read_nics(sysfs);
  add_gpu_distances(inv.nics, inv.gpus);
  inv.rails = name_rails(inv.gpus, inv.nics);
  inv.paths = derive_paths(inv);
  for (const auto& g : inv.gpus)
    for (const auto& f : g.flags) inv.flags.push_back(fmt::format("GPU{}: {}", g.index, f));
  for (const auto& n : inv.nics)
    for (const auto& f : n.flags) inv.flags.push_back(fmt::format("{}: {}", n.name, f));
  return inv;
}

}  // namespace fb::topo
