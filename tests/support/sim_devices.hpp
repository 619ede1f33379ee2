// The host double of the GPU backends' device layer (devices.hpp), for tests
// only: never installed, never reachable from a flag. It simulates the GPUs
// of one node fixture in host memory, as one process sees them through its
// CUDA_VISIBLE_DEVICES, so the backends' own code (placement, buffers, copy
// paths, peer identity, path labels) runs multi-rank in CI on CPU.
//
// - Devices carry PCI bus ids (domain 00fb, which no real machine has, so
//   sysfs lookups find nothing), UUIDs in NVML's form, memory sizes and a
//   P2P topology: every pair on an NVLink node; pairs of one socket on a
//   PCIe node.
// - A process sees the GPUs its CUDA_VISIBLE_DEVICES names, read as the CUDA
//   runtime reads it (cuda_visible): indices or UUID prefixes, up to the
//   first entry that names no GPU.
// - Device memory is host memory held to the GPU's size; every allocation
//   is known by its GPU, and copies refuse a pointer on the wrong GPU or of
//   the wrong kind, as a real copy would fail or go astray. Peer copies are
//   kept in a ledger by bus id, so a test sees which GPU received them.
// - Streams run work at once on a virtual clock per stream, advanced by a
//   cost model of the node's links (times a slow-device factor), so event
//   times are deterministic whatever the machine's load; a capture records
//   work and a graph launch runs it (tests/support/sim_queue.hpp). A stream
//   that waits for a capturing stream joins its capture, as CUDA's does.
// - The check's kernels have host twins on the same templates
//   (check_values.hpp, check::matches) for every datatype, the narrow floats
//   through host_narrow.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cuda_common/devices.hpp"
#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/record_lines.hpp"

namespace fb::test {

struct SimGpu {
  std::string bus_id;
  std::string uuid;  // "GPU-8c1c4e0b-...", as NVML and nvidia-smi write it
  int socket = 0;
  std::uint64_t memory_bytes = 0;
  double slow = 1.0;  // device time multiplier: 2 = every piece of work takes twice as long
};

struct SimNode {
  std::string model;  // as the device's name says it
  std::vector<SimGpu> gpus;
  bool nvlink = false;  // every pair P2P over NVLink; else P2P between GPUs of one socket over PCIe
  int sm_count = 132;
  // Matrix-product peaks (dense, fp32 accumulation), what the GEMM double's
  // products take their device time from: bf16 and fp16 on the tensor
  // cores, fp8 e4m3 on them at twice that, fp32 without TF32 (the H100 SXM
  // datasheet's dense figures).
  double tensor_tflops = 989;
  double fp8_tflops = 1979;
  double fp32_tflops = 67;
  int cc_major = 9;
  int cc_minor = 0;
};

inline constexpr std::uint64_t kSimGpuBytes = std::uint64_t{64} << 20;

// An 8-GPU HGX node on two sockets (GPUs 0-3 and 4-7), NVLink between every
// pair. `node` numbers the job's nodes: each node's GPUs have their own
// UUIDs, as real GPUs do, the same in every process and run.
SimNode hgx_node(std::uint64_t memory_bytes = kSimGpuBytes, int node = 0);
// A 4-GPU PCIe node on two sockets, P2P only inside a socket.
SimNode pcie_node(std::uint64_t memory_bytes = kSimGpuBytes, int node = 0);

// The node's GPUs (indices into node.gpus) a process sees under
// CUDA_VISIBLE_DEVICES `list`, in its CUDA order, read as the CUDA runtime
// reads it: each entry an index (the double's CUDA order is the fixture's)
// or a UUID, whole or cut to enough of its start to name one GPU ("GPU-8c1c"),
// up to the first entry that names no GPU; CUDA ignores the rest.
std::vector<int> cuda_visible(const SimNode& node, const std::string& list);
// The same from this process's CUDA_VISIBLE_DEVICES: every GPU when unset.
std::vector<int> cuda_visible(const SimNode& node);

// Link rates of the cost model (GB/s) and the fixed cost of queuing work (us).
struct SimCosts {
  double launch_us = 2.5;
  double hbm_copy_gbps = 2000;  // copy engine, device to device
  double sm_copy_gbps = 1850;
  double pcie_gbps = 55;     // host <-> device, and P2P on a PCIe node
  double nvlink_gbps = 370;  // P2P on an NVLink node
  double staged_gbps = 20;   // a peer copy without peer access, through the host
};

class SimDevices final : public gpu::Devices {
 public:
  // `visible`: the node's GPUs this process sees, in its CUDA order (its
  // CUDA_VISIBLE_DEVICES as indices into node.gpus: cuda_visible).
  SimDevices(SimNode node, std::vector<int> visible);
  ~SimDevices() override;

  bool simulated() const override { return true; }
  std::string absent_reason() override { return {}; }
  std::string version() override {
    return "simulated " + node_.model + " GPUs (fabricbench's host device double; not a measurement)";
  }
  int count() override { return static_cast<int>(visible_.size()); }
  std::string make_current(int device) override;
  int current_device() override { return current_; }
  gpu::DeviceProps props(int device) override;
  int by_bus_id(const std::string& bus_id) override;
  bool can_access_peer(int device, int peer) override;
  void set_peer_access(int device, int peer, bool on) override;

  std::string allocate(gpu::MemoryKind kind, int device, std::size_t bytes, void*& data) override;
  void release(gpu::MemoryKind kind, int device, void* data) noexcept override;
  std::string memory_text(int device) override;

  std::unique_ptr<gpu::DeviceStream> make_stream(int device) override;
  void copy_now(void* dst, const void* src, std::size_t bytes, int device) override;

  void fill_input(int device, const CheckContext& ctx, void* in) override;
  void poison(int device, void* out, std::size_t bytes) override;
  std::uint64_t count_wrong(int device, const CheckContext& ctx, const void* out) override;
  void corrupt_element(int device, Dtype dtype, void* out, std::uint64_t index) override;

  // What the tests read.
  struct PeerCopy {
    std::string from_bus_id;
    std::string to_bus_id;
    bool peer_access = false;  // over P2P (else staged through the host)
    std::uint64_t bytes = 0;
  };
  std::vector<PeerCopy> peer_copies;  // one per peer copy run
  std::uint64_t device_bytes_in_use(int device) const;
  int current() const { return current_; }  // the device last made current (placement's)
  // The UUID of the GPU behind this process's index, as NVML lists it
  // (cudaDeviceProp::uuid; the device layer's props do not carry it).
  const std::string& uuid(int device) const { return node_.gpus[static_cast<std::size_t>(physical(device))].uuid; }
  // The node's GPUs this process made current, as NVML lists a context's
  // process on each (SimNvml): a CUDA context stays until the process ends.
  const std::vector<int>& opened() const { return opened_; }
  // From now on the GPUs never finish their work, as a GPU stuck in a kernel:
  // queued work does not run, synchronize() never returns, a mark is never
  // passed and a timing queue's wait returns only through what its poll
  // throws (NCCL's waits: an abort). For a run ended while a row is in flight.
  void stall() { stalled_ = true; }
  bool stalled() const { return stalled_; }

  // Used by the streams.
  struct Allocation {
    gpu::MemoryKind kind;
    int gpu;  // index into the node's GPUs
    std::size_t bytes;
  };
  // The allocation holding [p, p + bytes), nullptr for memory the double did not hand out (pageable).
  const Allocation* find(const void* p, std::size_t bytes) const;
  // Refuses (RunError naming the call) a pointer that is not of `what`.
  void require_device(const char* call, const void* p, std::size_t bytes, int gpu) const;
  void require_host(const char* call, const void* p, std::size_t bytes) const;
  int physical(int device) const;  // the node's GPU behind this process's index (throws for a bad index)
  bool peer_enabled(int device, int peer) const;
  double cost_us(int gpu, std::size_t bytes, double gbps) const;
  // A matrix product's device time: `flop` at the fixture's peak for `dtype`
  // (bf16 and fp16 on the tensor cores, else fp32), times the slow factor.
  // No launch cost: products queued back to back hide it behind each other.
  double product_us(int gpu, double flop, Dtype dtype) const;
  // The rate products of `dtype` reach on this process's `device`, in
  // 1e12 flop/s: what `fabricbench gemm` through the double reports.
  double product_tflops(int device, Dtype dtype) const;
  const SimCosts& costs() const { return costs_; }

 private:
  SimNode node_;
  std::vector<int> visible_;
  SimCosts costs_;
  int current_ = 0;
  std::vector<int> opened_;  // node GPUs made current, each once
  std::map<const std::byte*, Allocation> allocations_;
  std::vector<std::pair<int, int>> peer_on_;  // (device, peer) pairs with access enabled
  bool stalled_ = false;
};

// For the NCCL double (sim_nccl.hpp): queues `work` on a stream of a
// SimDevices; it runs when the stream reaches it (at once, or when a captured
// graph is replayed), and may move the stream's clock (a collective ends
// after its last rank arrived). And the cost of moving `bytes` at `gbps`
// from the stream's GPU, its slow factor included.
void sim_enqueue(gpu::DeviceStream& stream, double cost_us, std::function<void(double& clock_us)> work);
double sim_cost_us(gpu::DeviceStream& stream, std::size_t bytes, double gbps);
// The device time of a matrix product of `flop` in `dtype` on the stream's GPU (SimDevices::product_us).
double sim_product_us(gpu::DeviceStream& stream, double flop, Dtype dtype);
// The device double behind a stream, for the other doubles' checks (sim_blas.hpp).
SimDevices& sim_devices_of(gpu::DeviceStream& stream);
// The stream's devices stall (SimDevices::stall).
void sim_stall(gpu::DeviceStream& stream);
// Whether the work running now on the stream runs from a graph launch.
bool sim_replaying(gpu::DeviceStream& stream);

// The header of a `run` record made through the doubles on `ranks` ranks:
// the backend's name and version, and `simulated` as the backend says.
inline RunHeader simulated_run_header(const Backend& backend, int ranks) {
  RunHeader header;
  header.command = "run";
  header.ranks = ranks;
  header.backend = std::string(backend.name());
  header.backend_version = backend.version();
  header.simulated = backend.simulated();
  return header;
}

}  // namespace fb::test
