// A rank's inventory: its node's GPUs (NVML, sysfs), NVLink, PCIe links,
// NICs (/sys/class/infiniband, /sys/class/net), the GPU and NIC distances, and
// the path each scope takes with its spec peak. Written as one `inventory`
// line of the results record (docs/results-schema.md).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/topo/fact.hpp"
#include "fabricbench/topo/nvml.hpp"
#include "fabricbench/topo/sysfs.hpp"

namespace fb::topo {

struct PcieLink {
  std::string source;              // "nvml" or "sysfs"
  Fact<int> gen, width;            // as trained now
  Fact<int> max_gen, max_width;    // the most the device and its slot allow together
  Fact<int> device_max_gen;        // the device alone (a Gen5 card in a Gen4 slot: 5)
  Fact<double> peak_gbps() const;  // max_gen x max_width, per direction
};

struct NvLinkPeer {
  std::string peer;  // "GPU3", "NVSwitch", or the far end's bus id
  int links = 0;
};

struct NvLinks {
  Fact<int> present;  // links NVML answers for; unknown without NVML
  int active = 0;
  std::vector<int> down;  // links that exist but are not active
  Fact<int> generation;   // of the active links
  std::vector<NvLinkPeer> peers;
  Fact<double> per_link_gbps() const;
  Fact<double> total_gbps() const;  // active links x per-link rate, per direction
};

// A process with a compute context on a GPU when the inventory was read.
struct GpuUser {
  unsigned pid = 0;                       // the driver's number (GpuProcess)
  Fact<std::string> name;                 // /proc/<pid>/comm; unknown when this node's /proc has no such pid
  Fact<std::uint64_t> used_memory_bytes;  // its GPU memory
  bool ours = false;                      // a rank of this fabricbench job on this node
};

// Whether the GPU is the job's alone: who else has a context on it, whether
// others may, and whether it is split (MIG).
struct GpuSharing {
  Fact<std::vector<GpuUser>> users;
  Fact<ComputeMode> compute_mode;
  Fact<bool> mig;
};

struct Gpu {
  int index = 0;  // NVML's index (PCI order), or sysfs order without NVML
  Fact<std::string> model, uuid, bus_id, architecture;
  Fact<std::uint64_t> memory_bytes;
  Fact<unsigned> pstate;  // 0 = P0, full speed; GPUs lower the PCIe speed in idle states
  PcieLink pcie;
  NvLinks nvlink;
  Fact<int> numa_node;
  Fact<std::string> cpu_affinity;  // CPU list, "0-55,112-167"
  Fact<PciPlace> place;
  GpuSharing sharing;
  Fact<GpuFabric> fabric;  // its multi-node NVLink domain (NVL72); unknown where NVML cannot say
  std::vector<std::string> flags;
};

// One RDMA port (IB or RoCE) or one Ethernet interface.
struct Nic {
  std::string name;         // "mlx5_0:1" (device:port) or "eth0"
  std::string kind;         // "IB", "RoCE", "EFA" (AWS, by its driver) or "Ethernet"
  Fact<std::string> state;  // IB: ACTIVE, DOWN, ...; Ethernet: the operstate (up, down)
  bool up = false;
  Fact<std::string> phys_state;  // RDMA ports: LinkUp, Polling, Disabled
  Fact<std::string> rate;        // RDMA ports: "400 Gb/sec (4X NDR)"
  Fact<double> rate_gbit;        // Gb/s (bits)
  Fact<std::string> link_layer;  // RDMA ports: InfiniBand or Ethernet
  Fact<std::string> firmware, driver;
  Fact<int> mtu_bytes;
  std::vector<std::string> netdevs;  // RDMA ports: the interfaces on the same PCI function
  Fact<PciPlace> place;
  std::vector<std::pair<std::string, std::string>> gpu_distance;  // ("GPU0", "PIX")
  std::vector<std::string> flags;
};

// The NICs nearest a GPU: its rail.
struct Rail {
  int gpu = 0;
  std::vector<std::string> nics;
  std::string distance;  // "PIX", ...
};

// The path a scope takes and what it promises per direction.
struct Path {
  std::string scope;  // intra, inter, rail, domain
  std::string cls;    // NVLink, PCIe, SHM, IB, RoCE, TCP
  Fact<double> peak_gbps;
  std::string basis;  // "NVLink4 x18", "8 x 400 Gb/s NDR"
};

struct Software {
  Fact<std::string> driver, nvml, cuda_driver, cuda_runtime, nccl;
};

struct RankPlace {
  int rank = 0;
  int node = 0;
  int local_rank = 0;
  std::string host;
  std::vector<long> job_pids;  // the pids of this job's ranks on this node (their GPU contexts are not "others")
};

struct Inventory {
  RankPlace place;
  Software software;
  std::string gpus_note;  // why the GPU list may lack details (NVML absent), "" when NVML answered
  std::vector<Gpu> gpus;
  Fact<int> rank_gpu;                                // index into gpus of the GPU this rank drives
  std::vector<std::vector<std::string>> gpu_matrix;  // "X", "NV18", "PIX", ... like nvidia-smi topo -m
  std::vector<Nic> nics;
  std::vector<Rail> rails;
  std::vector<Path> paths;
  std::vector<std::string> flags;  // every GPU and NIC flag, prefixed with its name
};

// Versions of the libraries fabricbench loaded (CUDA runtime, NCCL: its GPU
// plugins link them), and the CUDA driver as the runtime sees it (a fallback
// for NVML's). The registry asks the plugins (fb::loaded_library_versions).
struct LinkedVersions {
  Fact<std::string> cuda_runtime, cuda_driver, nccl;
};

// The readers. Each reads under the Sysfs root and asks `nvml`; none throws
// on what the machine answers.
// `job_pids`: the job's ranks on this node, whose contexts are not flagged.
std::vector<Gpu> read_gpus(const Sysfs& sysfs, Nvml& nvml, const std::vector<long>& job_pids = {});
// NVML's processes on GPU `gpu` (named from /proc under the Sysfs root), its
// compute mode and MIG mode.
GpuSharing read_gpu_sharing(const Sysfs& sysfs, Nvml& nvml, unsigned gpu, const std::vector<long>& job_pids);
// What keeps a GPU from being the job's alone, as flag texts.
std::vector<std::string> sharing_flags(const GpuSharing& sharing);
PcieLink read_pcie_link(const Sysfs& sysfs, const std::string& bus_id);
std::vector<Nic> read_nics(const Sysfs& sysfs);
Software read_software(Nvml& nvml, const LinkedVersions& linked);

// Derived facts.
std::vector<std::vector<std::string>> gpu_matrix(const std::vector<Gpu>& gpus);
void add_gpu_distances(std::vector<Nic>& nics, const std::vector<Gpu>& gpus);
std::vector<Rail> name_rails(const std::vector<Gpu>& gpus, const std::vector<Nic>& nics);
// How CUDA numbers a rank's GPUs, and which the rank was told to take.
struct CudaView {
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES; unset shows every GPU, empty none
  std::optional<std::string> device_order;     // CUDA_DEVICE_ORDER; unset is CUDA's FASTEST_FIRST
  int device_option = -1;                      // --device; -1: the local rank's index among the visible
  static CudaView from_environment(int device_option);
};

// The GPU (NVML index) of local rank `local_rank`, as the GPU backends place
// it: --device, else local rank modulo the GPUs CUDA makes visible
// (CUDA_VISIBLE_DEVICES: indices in CUDA's order, or UUID prefixes). Unknown
// where CUDA's order is its guess (mixed GPUs without PCI_BUS_ID order).
Fact<int> pick_rank_gpu(const std::vector<Gpu>& gpus, int local_rank, const CudaView& view);
std::vector<Path> derive_paths(const Inventory& inv);

// "0-3,8,10-11", the kernel's CPU list format.
std::string cpu_list_text(std::vector<int> cpus);
// The CPUs this process may run on (sched_getaffinity), as a CPU list.
Fact<std::string> process_cpus();

// Everything for one rank.
Inventory read_inventory(const Sysfs& sysfs, Nvml& nvml, const LinkedVersions& linked, const RankPlace& place,
                         const CudaView& cuda);

// The record line {"type":"inventory", ...}.
nlohmann::ordered_json to_json(const Inventory& inv);

}  // namespace fb::topo
