#include "sim_nvml.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <sstream>

namespace fb::test {
namespace {

using topo::Fact;

// NVML_DEVICE_ARCH_* of the fixture's compute capability, where one fits.
Fact<unsigned> arch_of(const SimNode& node) {
  if (node.cc_major == 9) return 9u;                            // Hopper
  if (node.cc_major == 10) return 10u;                          // Blackwell
  if (node.cc_major == 8) return node.cc_minor == 9 ? 8u : 7u;  // Ada, Ampere
  return Fact<unsigned>::unknown(
      fmt::format("the simulated node's compute capability {}.{} maps to no NVML architecture the double knows",
                  node.cc_major, node.cc_minor));
}

// NVML's counters a GPU without NVLink does not have.
bool nvlink_counter(topo::GpuCounter c) {
  return c == topo::GpuCounter::nvlink_crc_flit_errors || c == topo::GpuCounter::nvlink_replay_errors ||
         c == topo::GpuCounter::nvlink_recovery_errors;
}

}  // namespace

std::string nvml_bus_id(const std::string& bus_id) {
  const auto colon = bus_id.find(':');
  std::string out = colon != std::string::npos && colon < 8 ? std::string(8 - colon, '0') + bus_id : bus_id;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

SimNvml::SimNvml(SimNode node) : node_(std::move(node)), order_(node_.gpus.size()) {
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [this](int a, int b) {
    return nvml_bus_id(node_.gpus[static_cast<std::size_t>(a)].bus_id) <
           nvml_bus_id(node_.gpus[static_cast<std::size_t>(b)].bus_id);
  });
}

void SimNvml::hold(int gpu, unsigned pid) {
  auto& pids = holders_[gpu];
  if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
}

void SimNvml::raise(int gpu, topo::GpuCounter counter, std::uint64_t by) { raised_[{gpu, counter}] += by; }

unsigned SimNvml::index_of(int gpu) const {
  return static_cast<unsigned>(std::find(order_.begin(), order_.end(), gpu) - order_.begin());
}

std::string SimNvml::fmt_missing(const char* what) {
  return fmt::format("the simulated node's fixture has no {} (fabricbench's NVML double over SimDevices)", what);
}

const SimGpu* SimNvml::at(unsigned gpu) const {
  if (gpu >= order_.size()) return nullptr;
  return &node_.gpus[static_cast<std::size_t>(order_[gpu])];
}

Fact<std::string> SimNvml::name(unsigned gpu) {
  if (!at(gpu)) return Fact<std::string>::unknown(kInvalid);
  return node_.model + " (simulated)";  // as SimDevices::props names it
}

Fact<std::string> SimNvml::uuid(unsigned gpu) {
  if (!at(gpu)) return Fact<std::string>::unknown(kInvalid);
  return at(gpu)->uuid;  // the UUID the device double resolves CUDA_VISIBLE_DEVICES by
}

Fact<std::string> SimNvml::pci_bus_id(unsigned gpu) {
  if (!at(gpu)) return Fact<std::string>::unknown(kInvalid);
  return nvml_bus_id(at(gpu)->bus_id);
}

Fact<std::uint64_t> SimNvml::memory_total_bytes(unsigned gpu) {
  if (!at(gpu)) return Fact<std::uint64_t>::unknown(kInvalid);
  return at(gpu)->memory_bytes;
}

Fact<unsigned> SimNvml::architecture(unsigned gpu) {
  if (!at(gpu)) return Fact<unsigned>::unknown(kInvalid);
  return arch_of(node_);
}

int SimNvml::link_peer(unsigned gpu, unsigned link) const {
  if (!at(gpu) || !node_.nvlink || link + 1 >= order_.size()) return -1;
  // Link k reaches the k-th other GPU, in NVML order.
  const unsigned peer = link < gpu ? link : link + 1;
  return order_[peer];
}

Fact<bool> SimNvml::nvlink_active(unsigned gpu, unsigned link) {
  if (link_peer(gpu, link) < 0) return Fact<bool>::unknown("Not Supported (NVML error 3)");
  return true;  // the fixture has no link down
}

Fact<unsigned> SimNvml::nvlink_version(unsigned gpu, unsigned link) {
  if (link_peer(gpu, link) < 0) return Fact<unsigned>::unknown("Not Supported (NVML error 3)");
  return no<unsigned>("NVLink version");
}

Fact<std::string> SimNvml::nvlink_remote_bus_id(unsigned gpu, unsigned link) {
  const int peer = link_peer(gpu, link);
  if (peer < 0) return Fact<std::string>::unknown("Not Supported (NVML error 3)");
  return nvml_bus_id(node_.gpus[static_cast<std::size_t>(peer)].bus_id);
}

Fact<topo::NvLinkEnd> SimNvml::nvlink_remote_type(unsigned gpu, unsigned link) {
  if (link_peer(gpu, link) < 0) return Fact<topo::NvLinkEnd>::unknown("Not Supported (NVML error 3)");
  return topo::NvLinkEnd::gpu;
}

Fact<std::uint64_t> SimNvml::memory_used_bytes(unsigned gpu) {
  // Each rank's SimDevices holds its own allocations: no process sees the others'.
  return per_gpu<std::uint64_t>(gpu, "node-wide memory use (each rank's double counts only its own)");
}

Fact<std::vector<topo::GpuProcess>> SimNvml::compute_processes(unsigned gpu) {
  if (!at(gpu)) return Fact<std::vector<topo::GpuProcess>>::unknown(kInvalid);
  std::vector<topo::GpuProcess> out;
  const auto it = holders_.find(order_[gpu]);
  if (it == holders_.end()) return out;
  for (unsigned pid : it->second)
    out.push_back({pid, Fact<std::uint64_t>::unknown("NVML_VALUE_NOT_AVAILABLE (the double does not share "
                                                     "its processes' allocations)")});
  return out;
}

Fact<topo::ComputeMode> SimNvml::compute_mode(unsigned gpu) {
  if (!at(gpu)) return Fact<topo::ComputeMode>::unknown(kInvalid);
  return topo::ComputeMode::shared;  // SimDevices::make_current lets any process open any device
}

Fact<bool> SimNvml::mig_enabled(unsigned gpu) {
  if (!at(gpu)) return Fact<bool>::unknown(kInvalid);
  return false;  // the double has no MIG instances
}

Fact<topo::GpuFabric> SimNvml::fabric(unsigned gpu) {
  if (!at(gpu)) return Fact<topo::GpuFabric>::unknown(kInvalid);
  return topo::GpuFabric{};  // state not_supported: the fixtures have no multi-node NVLink
}

Fact<std::uint64_t> SimNvml::gpu_counter(unsigned gpu, topo::GpuCounter counter) {
  if (!at(gpu)) return Fact<std::uint64_t>::unknown(kInvalid);
  if (nvlink_counter(counter) && !node_.nvlink) return Fact<std::uint64_t>::unknown("Not Supported (NVML error 3)");
  const auto it = raised_.find({order_[gpu], counter});
  return it == raised_.end() ? std::uint64_t{0} : it->second;
}

void node_holders(SimNvml& nvml, const SimDevices& devices, const Comm& node) {
  std::string mine = std::to_string(getpid());
  for (int gpu : devices.opened()) mine += " " + std::to_string(gpu);
  for (const auto& text : node.allgather_strings(mine)) {
    std::istringstream in(text);
    unsigned pid = 0;
    in >> pid;
    for (int gpu; in >> gpu;) nvml.hold(gpu, pid);
  }
}

}  // namespace fb::test
