#include "sim_devices.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string_view>
#include <type_traits>

#include "fabricbench/core/check_inexact.hpp"
#include "fabricbench/core/errors.hpp"
#include "host_narrow.hpp"
#include "fabricbench/core/pattern.hpp"
#include "fabricbench/core/sizes.hpp"
#include "sim_queue.hpp"

namespace fb::test {
namespace {

using gpu::CopyKind;
using gpu::MemoryKind;

// SplitMix64's step: spreads a seed over all 64 bits, so fixtures that
// differ in one GPU or node index get unrelated UUIDs, as real GPUs have.
std::uint64_t spread(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// FNV-1a of the model's name: a seed fixed by the text alone, unlike
// std::hash, which may differ between standard libraries.
std::uint64_t name_seed(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// A fixture GPU's UUID in NVML's 8-4-4-4-12 form, drawn from the model, the
// node and the GPU's index: stable across processes and runs (every rank
// builds its node's fixture alone), distinct between GPUs and nodes.
std::string sim_uuid(const std::string& model, int node, int gpu) {
  std::uint64_t state = name_seed(model) ^ (static_cast<std::uint64_t>(node) << 32) ^ static_cast<std::uint64_t>(gpu);
  const std::uint64_t hi = spread(state);
  const std::uint64_t lo = spread(state);
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffull);
}

SimNode node_of(std::string model, int gpus, bool nvlink, std::uint64_t memory_bytes, int node_index) {
  SimNode node;
  node.model = std::move(model);
  node.nvlink = nvlink;
  for (int g = 0; g < gpus; ++g)
    node.gpus.push_back({fmt::format("00FB:{:02X}:00.0", 0x10 + g), sim_uuid(node.model, node_index, g),
                         g < gpus / 2 ? 0 : 1, memory_bytes, 1.0});
  return node;
}

// The node GPU a CUDA_VISIBLE_DEVICES index names, or -1: a whole decimal
// number below the GPU count ("1x" or "-1" name none, and stop the list).
int gpu_by_index(const SimNode& node, std::string_view entry) {
  int index = -1;
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
  if (ec != std::errc() || end != entry.data() + entry.size()) return -1;
  return index >= 0 && index < static_cast<int>(node.gpus.size()) ? index : -1;
}

// The node GPU whose UUID starts with `entry`, or -1. A prefix two GPUs
// share names neither: CUDA asks for enough digits to pick out one GPU.
int gpu_by_uuid(const SimNode& node, std::string_view entry) {
  int found = -1;
  for (std::size_t g = 0; g < node.gpus.size(); ++g) {
    if (!std::string_view(node.gpus[g].uuid).starts_with(entry)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(g);
  }
  return found;
}

// The node GPU one CUDA_VISIBLE_DEVICES entry names, or -1.
int named_gpu(const SimNode& node, std::string_view entry) {
  return entry.starts_with("GPU-") ? gpu_by_uuid(node, entry) : gpu_by_index(node, entry);
}

class SimStream;

// StreamTimer's queue on a stream: the stream's own queue, its graph
// dropped with the view, as CudaQueue's is.
class QueueView final : public gpu::DeviceQueue {
 public:
  QueueView(SimQueue& q, const SimDevices& d, std::function<void()> poll) : q_(q), d_(d), poll_(std::move(poll)) {}
  ~QueueView() override { q_.drop_graph(); }
  void ensure_events(std::size_t n) override { q_.ensure_events(n); }
  void record(std::size_t e) override { q_.record(e); }
  void wait(std::size_t e) override {
    q_.wait(e);
    if (poll_) poll_();  // the work has run: one poll, as a waiter's first query would make
    // A stalled device never reaches the event: only what a poll throws (an abort) ends the wait.
    while (d_.stalled()) {
      if (poll_) poll_();
      sched_yield();
    }
  }
  double elapsed_us(std::size_t from, std::size_t to) override { return q_.elapsed_us(from, to); }
  void begin_capture() override { q_.begin_capture(); }
  void end_capture() override { q_.end_capture(); }
  void abandon_capture() noexcept override { q_.abandon_capture(); }
  void upload_graph() override { q_.upload_graph(); }
  void launch_graph() override { q_.launch_graph(); }
  void drop_graph() noexcept override { q_.drop_graph(); }

 private:
  SimQueue& q_;
  const SimDevices& d_;
  std::function<void()> poll_;
};

class SimStream final : public gpu::DeviceStream {
 public:
  SimStream(SimDevices& devices, int device) : d_(devices), device_(device), gpu_(devices.physical(device)) {}

  std::unique_ptr<gpu::DeviceQueue> timing_queue(std::function<void()> poll) override {
    return std::make_unique<QueueView>(q_, d_, std::move(poll));
  }

  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
    double gbps = d_.costs().pcie_gbps;
    switch (kind) {
      case CopyKind::host_to_device:
        d_.require_host("cudaMemcpyAsync (host to device) source", src, bytes);
        d_.require_device("cudaMemcpyAsync (host to device) destination", dst, bytes, -1);
        break;
      case CopyKind::device_to_host:
        d_.require_device("cudaMemcpyAsync (device to host) source", src, bytes, -1);
        d_.require_host("cudaMemcpyAsync (device to host) destination", dst, bytes);
        break;
      case CopyKind::device_to_device:
        d_.require_device("cudaMemcpyAsync (device to device) source", src, bytes, gpu_);
        d_.require_device("cudaMemcpyAsync (device to device) destination", dst, bytes, gpu_);
        gbps = d_.costs().hbm_copy_gbps;
        break;
      case CopyKind::any:
        break;
    }
    queue(d_.cost_us(gpu_, bytes, gbps), [=] { std::memmove(dst, src, bytes); });
  }

  void copy_peer(void* dst, int dst_device, const void* src, std::size_t bytes) override {
    const int to = d_.physical(dst_device);
    d_.require_device("cudaMemcpyPeerAsync source", src, bytes, gpu_);
    d_.require_device("cudaMemcpyPeerAsync destination", dst, bytes, to);
    const bool p2p = d_.peer_enabled(device_, dst_device);
    const double gbps = p2p ? d_.costs().nvlink_gbps : d_.costs().staged_gbps;
    SimDevices::PeerCopy ledger{d_.props(device_).pci_bus_id, d_.props(dst_device).pci_bus_id, p2p, bytes};
    queue(d_.cost_us(gpu_, bytes, gbps), [this, dst, src, bytes, ledger] {
      std::memmove(dst, src, bytes);
      d_.peer_copies.push_back(ledger);
    });
  }

  void sm_copy(void* dst, const void* src, std::size_t bytes, int) override {
    d_.require_device("sm_copy source", src, bytes, gpu_);
    d_.require_device("sm_copy destination", dst, bytes, gpu_);
    queue(d_.cost_us(gpu_, bytes, d_.costs().sm_copy_gbps), [=] { std::memmove(dst, src, bytes); });
  }

  void launch_empty_kernel() override {
    queue(d_.cost_us(gpu_, 0, 1), [] {});
  }

  void wait_for(gpu::DeviceStream& other) override {
    auto& o = dynamic_cast<SimStream&>(other);
    if (o.joined_ == this) {
      o.joined_ = nullptr;  // the join that ends a fork: the other leaves this stream's capture
    } else if (&o.target() != &target() && o.target().capturing()) {
      joined_ = &o;  // this stream's work goes into the other's capture from now on
      return;
    }
    q_.clock_us = std::max(q_.clock_us, o.q_.clock_us);
  }

  // Work has already run, unless the device stalled: then, as on a GPU, a
  // synchronize never returns and a mark is never passed.
  void synchronize() override {
    while (d_.stalled()) sched_yield();
  }
  void mark() override {}
  bool mark_passed() override { return !d_.stalled(); }

  void queue(double cost_us, std::function<void()> work) { target().enqueue(cost_us, std::move(work)); }
  SimQueue& target() { return joined_ ? joined_->target() : q_; }
  int gpu() const { return gpu_; }
  SimDevices& devices() { return d_; }

 private:
  SimDevices& d_;
  int device_;
  int gpu_;
  SimQueue q_;
  SimStream* joined_ = nullptr;  // the stream whose capture this one joined
};

}  // namespace

void sim_enqueue(gpu::DeviceStream& stream, double cost_us, std::function<void(double& clock_us)> work) {
  auto& s = dynamic_cast<SimStream&>(stream);
  s.queue(cost_us, [&s, work = std::move(work)] {
    if (!s.devices().stalled()) work(s.target().clock_us);  // a stalled device runs nothing more
  });
}

void sim_stall(gpu::DeviceStream& stream) { dynamic_cast<SimStream&>(stream).devices().stall(); }

bool sim_replaying(gpu::DeviceStream& stream) { return dynamic_cast<SimStream&>(stream).target().replaying(); }

double sim_product_us(gpu::DeviceStream& stream, double flop, Dtype dtype) {
  auto& s = dynamic_cast<SimStream&>(stream);
  return s.devices().product_us(s.gpu(), flop, dtype);
}

SimDevices& sim_devices_of(gpu::DeviceStream& stream) { return dynamic_cast<SimStream&>(stream).devices(); }

double sim_cost_us(gpu::DeviceStream& stream, std::size_t bytes, double gbps) {
  auto& s = dynamic_cast<SimStream&>(stream);
  return s.devices().cost_us(s.gpu(), bytes, gbps);
}

SimNode hgx_node(std::uint64_t memory_bytes, int node) { return node_of("H100 SXM", 8, true, memory_bytes, node); }
SimNode pcie_node(std::uint64_t memory_bytes, int node) {
  SimNode n = node_of("L40S PCIe", 4, false, memory_bytes, node);
  n.tensor_tflops = 362;  // the L40S's dense bf16 and fp8 peaks; the H100's defaults otherwise
  n.fp8_tflops = 733;
  n.fp32_tflops = 91.6;
  return n;
}

std::vector<int> cuda_visible(const SimNode& node, const std::string& list) {
  std::vector<int> visible;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const int gpu = named_gpu(node, std::string_view(list).substr(start, comma - start));
    if (gpu < 0) break;  // CUDA shows the GPUs named before it and ignores the rest
    visible.push_back(gpu);
    start = comma + 1;
  }
  return visible;
}

std::vector<int> cuda_visible(const SimNode& node) {
  if (const char* list = std::getenv("CUDA_VISIBLE_DEVICES")) return cuda_visible(node, list);
  std::vector<int> every(node.gpus.size());
  std::iota(every.begin(), every.end(), 0);
  return every;
}

SimDevices::SimDevices(SimNode node, std::vector<int> visible) : node_(std::move(node)), visible_(std::move(visible)) {
  for (int g : visible_)
    if (g < 0 || g >= static_cast<int>(node_.gpus.size()))
      throw std::invalid_argument(fmt::format("SimDevices: no GPU {} on the node", g));
}

SimDevices::~SimDevices() {
  for (auto& [p, a] : allocations_) std::free(const_cast<std::byte*>(p));
}

int SimDevices::physical(int device) const {
  if (device < 0 || device >= static_cast<int>(visible_.size()))
    throw RunError(
        fmt::format("simulated GPU {}: invalid device ordinal (this process sees {})", device, visible_.size()));
  return visible_[static_cast<std::size_t>(device)];
}

std::string SimDevices::make_current(int device) {
  if (device < 0 || device >= count()) return fmt::format("invalid device ordinal {}", device);
  current_ = device;
  if (std::find(opened_.begin(), opened_.end(), physical(device)) == opened_.end()) opened_.push_back(physical(device));
  return {};
}

gpu::DeviceProps SimDevices::props(int device) {
  const SimGpu& g = node_.gpus[static_cast<std::size_t>(physical(device))];
  return {node_.model + " (simulated)", g.bus_id, g.memory_bytes, node_.cc_major, node_.cc_minor, node_.sm_count};
}

int SimDevices::by_bus_id(const std::string& bus_id) {
  for (std::size_t i = 0; i < visible_.size(); ++i)
    if (node_.gpus[static_cast<std::size_t>(visible_[i])].bus_id == bus_id) return static_cast<int>(i);
  return -1;
}

bool SimDevices::can_access_peer(int device, int peer) {
  const int a = physical(device);
  const int b = physical(peer);
  if (a == b) return false;
  return node_.nvlink ||
         node_.gpus[static_cast<std::size_t>(a)].socket == node_.gpus[static_cast<std::size_t>(b)].socket;
}

void SimDevices::set_peer_access(int device, int peer, bool on) {
  const std::pair<int, int> pair{physical(device), physical(peer)};
  const auto it = std::find(peer_on_.begin(), peer_on_.end(), pair);
  if (!on) {
    if (it != peer_on_.end()) peer_on_.erase(it);
    return;
  }
  if (!can_access_peer(device, peer))
    throw RunError(
        fmt::format("cudaDeviceEnablePeerAccess failed (simulated GPU {} to {}): "
                    "cudaErrorPeerAccessUnsupported",
                    device, peer));
  if (it == peer_on_.end()) peer_on_.push_back(pair);
}

bool SimDevices::peer_enabled(int device, int peer) const {
  return std::find(peer_on_.begin(), peer_on_.end(), std::pair{physical(device), physical(peer)}) != peer_on_.end();
}

std::uint64_t SimDevices::device_bytes_in_use(int device) const {
  const int gpu = physical(device);
  std::uint64_t used = 0;
  for (const auto& [p, a] : allocations_)
    if (a.kind == MemoryKind::device && a.gpu == gpu) used += a.bytes;
  return used;
}

std::string SimDevices::allocate(MemoryKind kind, int device, std::size_t bytes, void*& data) {
  const int gpu = physical(device);
  if (kind == MemoryKind::device &&
      device_bytes_in_use(device) + bytes > node_.gpus[static_cast<std::size_t>(gpu)].memory_bytes)
    return "out of memory";
  data = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!data) return "out of memory";
  allocations_[static_cast<std::byte*>(data)] = {kind, gpu, bytes};
  return {};
}

void SimDevices::release(MemoryKind, int, void* data) noexcept {
  const auto it = allocations_.find(static_cast<std::byte*>(data));
  if (it == allocations_.end()) return;
  std::free(data);
  allocations_.erase(it);
}

std::string SimDevices::memory_text(int device) {
  const SimGpu& g = node_.gpus[static_cast<std::size_t>(physical(device))];
  return fmt::format("GPU {} has {} free of {}", device, format_bytes(g.memory_bytes - device_bytes_in_use(device)),
                     format_bytes(g.memory_bytes));
}

const SimDevices::Allocation* SimDevices::find(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const std::byte*>(p);
  auto it = allocations_.upper_bound(b);
  if (it == allocations_.begin()) return nullptr;
  --it;
  return b + bytes <= it->first + it->second.bytes ? &it->second : nullptr;
}

void SimDevices::require_device(const char* call, const void* p, std::size_t bytes, int gpu) const {
  const Allocation* a = find(p, bytes);
  if (!a || a->kind != MemoryKind::device)
    throw RunError(fmt::format("{}: {} bytes at {} are not device memory (simulated)", call, bytes, p));
  if (gpu >= 0 && a->gpu != gpu)
    throw RunError(fmt::format("{}: the memory is on {}, not on {} (simulated)", call,
                               node_.gpus[static_cast<std::size_t>(a->gpu)].bus_id,
                               node_.gpus[static_cast<std::size_t>(gpu)].bus_id));
}

void SimDevices::require_host(const char* call, const void* p, std::size_t bytes) const {
  const Allocation* a = find(p, bytes);
  if (a && a->kind == MemoryKind::device)
    throw RunError(fmt::format("{}: {} bytes at {} are device memory, not host memory (simulated)", call, bytes, p));
}

double SimDevices::cost_us(int gpu, std::size_t bytes, double gbps) const {
  const double transfer_us = static_cast<double>(bytes) / (gbps * 1e3);
  return (costs_.launch_us + transfer_us) * node_.gpus[static_cast<std::size_t>(gpu)].slow;
}

namespace {

// The fixture's peak for products of `dtype` (1e12 flop/s).
double peak_tflops(const SimNode& node, Dtype dtype) {
  if (dtype == Dtype::fp8_e4m3) return node.fp8_tflops;
  return dtype == Dtype::bfloat16 || dtype == Dtype::half ? node.tensor_tflops : node.fp32_tflops;
}

}  // namespace

double SimDevices::product_us(int gpu, double flop, Dtype dtype) const {
  return flop / (peak_tflops(node_, dtype) * 1e6) * node_.gpus[static_cast<std::size_t>(gpu)].slow;
}

double SimDevices::product_tflops(int device, Dtype dtype) const {
  return peak_tflops(node_, dtype) / node_.gpus[static_cast<std::size_t>(physical(device))].slow;
}

std::unique_ptr<gpu::DeviceStream> SimDevices::make_stream(int device) {
  return std::make_unique<SimStream>(*this, device);
}

void SimDevices::copy_now(void* dst, const void* src, std::size_t bytes, int) { std::memmove(dst, src, bytes); }

namespace {

// The check's kernels on the host (device_check.cu's twins): the same
// expectations (check_values.hpp), rounded to the datatype, judged alike
// (check::matches), every datatype the device has included.
void fill_host(const CheckContext& ctx, void* in) {
  if (!check::has_input(ctx)) return;
  visit_dtype<SimNarrow>(ctx.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename HostCompute<S>::type;
    S* p = static_cast<S*>(in);
    for (std::uint64_t i = 0; i < ctx.layout.in_elems; ++i)
      p[i] = static_cast<S>(check::input_value<C>(ctx, ctx.rank, i));
  });
}

std::uint64_t count_wrong_host(const CheckContext& ctx, const void* out) {
  if (!check::has_output(ctx)) return 0;
  return visit_dtype<SimNarrow>(ctx.dtype, [&](auto tag) -> std::uint64_t {
    using S = typename decltype(tag)::type;
    using C = typename HostCompute<S>::type;
    const S* p = static_cast<const S*>(out);
    std::uint64_t wrong = 0;
    for (std::uint64_t j = 0; j < ctx.layout.out_elems; ++j) {
      const C stored = static_cast<C>(static_cast<S>(check::expected_value<C>(ctx, j)));
      const C got = static_cast<C>(p[j]);
      bool ok;
      if constexpr (std::is_integral_v<C>)
        ok = got == stored;
      else
        ok = check::matches(static_cast<double>(got), static_cast<double>(stored), ctx);
      wrong += ok ? 0 : 1;
    }
    return wrong;
  });
}

// The check's pointers: device memory of that GPU, or pinned (mapped) memory.
void require_checkable(const SimDevices& d, const char* call, const void* p, std::size_t bytes, int gpu) {
  const SimDevices::Allocation* a = d.find(p, bytes);
  if (a && a->kind == MemoryKind::pinned) return;
  d.require_device(call, p, bytes, gpu);
}

}  // namespace

void SimDevices::fill_input(int device, const CheckContext& ctx, void* in) {
  require_checkable(*this, "the check's fill kernel", in, ctx.layout.in_elems * dtype_bytes(ctx.dtype),
                    physical(device));
  fill_host(ctx, in);
}

void SimDevices::poison(int device, void* out, std::size_t bytes) {
  require_checkable(*this, "the check's poison", out, bytes, physical(device));
  std::memset(out, pattern::kPoisonByte, bytes);
}

std::uint64_t SimDevices::count_wrong(int device, const CheckContext& ctx, const void* out) {
  require_checkable(*this, "the check's verify kernel", out, ctx.layout.out_elems * dtype_bytes(ctx.dtype),
                    physical(device));
  return count_wrong_host(ctx, out);
}

void SimDevices::corrupt_element(int, Dtype dtype, void* out, std::uint64_t index) {
  const std::size_t word = dtype_bytes(dtype);
  static_cast<unsigned char*>(out)[index * word + (word - 1)] ^= 0x40;
}

}  // namespace fb::test
