// Where each rank runs: one device per rank, checked across the node. Plain
// C++ over the device layer (devices.hpp).
#include <fmt/format.h>

#include <sstream>

#include "fabricbench/core/scope.hpp"
#include "gpu_backends.hpp"

namespace fb::gpu {
namespace {

// This rank's device, or why it has none.
[[nodiscard]] std::string pick_device(Devices& devices, int device_option, GpuPlacement& out) {
  if (std::string absent = devices.absent_reason(); !absent.empty()) return absent;
  out.device_count = devices.count();
  const gpu::DeviceChoice choice = choose_device(device_option, out.local_rank, out.device_count, host_name());
  if (!choice.error.empty()) return choice.error;
  out.device = choice.device;
  if (std::string error = devices.make_current(out.device); !error.empty())
    return fmt::format("CUDA device {} of host {} is not usable: {}", out.device, host_name(), error);
  const DeviceProps props = devices.props(out.device);
  out.name = props.name;
  out.pci_bus_id = props.pci_bus_id;
  out.memory_bytes = props.memory_bytes;
  out.cc_major = props.cc_major;
  out.cc_minor = props.cc_minor;
  out.sm_count = props.sm_count;
  return {};
}

}  // namespace

Support place_on_gpu(const Comm& world, int device_option, GpuPlacement& out, Devices& devices) {
  // The node as the engine forms them (FABRICBENCH_RANKS_PER_NODE in tests).
  const Comm node = split_nodes(world);
  out.local_rank = node.rank();
  std::string error = pick_device(devices, device_option, out);
  // Every rank of the node takes part, whatever it found, so none waits alone.
  const auto seen = node.allgather_strings(fmt::format("{} {}", world.rank(), error.empty() ? out.pci_bus_id : "-"));
  std::vector<PlacedRank> placed;
  for (const auto& text : seen) {
    std::istringstream fields(text);
    PlacedRank p;
    fields >> p.world_rank >> p.bus_id;
    if (p.bus_id == "-") p.bus_id.clear();
    placed.push_back(p);
  }
  if (error.empty())
    error = shared_gpu_error(placed, static_cast<std::size_t>(node.rank()), out.device, out.device_count,
                                  host_name());
  // The job's lowest GPU, so that what a GPU generation supports is decided alike on every rank.
  Capability mine;
  if (error.empty()) mine = {out.cc_major, out.cc_minor, world.rank(), host_name()};
  out.lowest = lowest_capability(world.allgather_strings(encode(mine)));
  return error.empty() ? Support::yes() : Support::no(error);
}

}  // namespace fb::gpu
