// Presets for the model: network NICs, node fabrics and GPUs, each with its
// figures and the public source they come from. The YAML lives in
// profiles/presets/ and is built into the binary, so `fabricbench model`
// needs no files beside it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fb::model {

// How a network carries NCCL's traffic: RDMA (InfiniBand, RoCE; NCCL NET/IB
// with GPUDirect) or TCP sockets (NCCL NET/Socket). NCCL allows its LL128
// protocol across nodes only over the first.
enum class Transport { rdma, tcp };
// The fabric between the GPUs of a node: NCCL's NVLink or PCI hop latencies.
enum class NodeFabric { nvlink, pcie };
// GPU generation, for NCCL's per-architecture protocol limits. cdna3 (AMD
// MI300X, MI325X) is priced from its datasheet; no backend of fabricbench
// measures it (RCCL is not supported), which the model's output says.
enum class GpuArch { ampere, ada, hopper, blackwell, cdna3 };
inline constexpr std::size_t kGpuArchs = 5;
static_assert(static_cast<std::size_t>(GpuArch::cdna3) + 1 == kGpuArchs);

std::string_view name(Transport t);
std::string_view name(NodeFabric f);
std::string_view name(GpuArch a);
// "" for an architecture fabricbench's NCCL backend measures; else why the
// figures for it are the datasheet's alone (AMD: no RCCL backend).
std::string_view unmeasured_reason(GpuArch a);

// A NIC type. A network spec names how many a node has ("8x400g-ndr-ib").
struct NetworkPreset {
  std::string name;         // "400g-ndr-ib"
  std::string description;
  double line_gbps = 0;     // line rate per NIC per direction, GB/s
  double achievable = 1.0;  // fraction of line rate large collectives reach
  Transport transport = Transport::rdma;
  double extra_hop_us = 0;  // latency per inter-node step beyond NCCL's table
  int nics_per_node = 1;    // the usual count (suggested when a spec lacks one)
  std::string source;
};

// The fabric inside a node: NVLink generation or PCIe.
struct NodePreset {
  std::string name;  // "nvlink4-8"
  std::string description;
  int gpus = 8;
  double line_gbps = 0;  // per GPU per direction, GB/s
  double achievable = 1.0;
  NodeFabric fabric = NodeFabric::nvlink;
  double nvls_gbps = 0;     // NVLS all_reduce busbw, 0 = no NVLS
  double extra_hop_us = 0;  // latency per step beyond NCCL's table
  // GPUs of one NVLink domain: the host's own (= gpus), or more where NVLink
  // switches join several hosts (GB200 NVL72: 72 GPUs over 18 trays of 4).
  // Collectives among GPUs of one domain stay on NVLink (model/domain.hpp).
  int domain_gpus = 8;
  std::string source;
  // What the model does not capture about this node, printed as a caveat
  // with every step priced on it ("" = none).
  std::string caveat;
};

// Achieved dense TFLOP/s of square GEMMs by size (the cube root of m n k),
// from a published benchmark or this project's own record, each cited: the
// compute rate of a GPU that was not measured (docs/model.md#preset-curves).
// None of them may come from the training tables the model is validated on.
struct GemmPresetCurve {
  std::vector<std::pair<double, double>> bf16;  // (size, TFLOP/s), ascending sizes
  std::vector<std::pair<double, double>> fp16;  // the bf16 points where the source gave none
  std::string source;
  bool empty() const { return bf16.empty(); }
  const std::vector<std::pair<double, double>>& of(std::string_view dtype) const {
    return dtype == "fp16" ? fp16 : bf16;
  }
};

// Achieved TFLOP/s of the fused flash-attention kernel by sequence length,
// from a cited kernel benchmark: what prices attention's score and value
// products (the 12 L h s FLOPs per token) where the workload runs flash
// attention (docs/model.md, "Attention"). FLOPs as FlashAttention's
// benchmarks count them: forward 4 b s^2 heads d, halved under a causal
// mask; backward 2.5 times the forward (it recomputes the scores).
struct AttentionPresetCurve {
  int head_dim = 0;                                       // the head dimension the source measured
  std::vector<std::pair<double, double>> forward_causal;  // (sequence length, TFLOP/s), causal mask
  std::vector<std::pair<double, double>> backward;        // (sequence length, TFLOP/s), no mask
  std::string source;
  bool empty() const { return forward_causal.empty(); }
};

struct GpuPreset {
  std::string name;  // "h100-sxm"
  std::string description;
  GpuArch arch = GpuArch::ampere;
  double memory_gib = 0;
  double bf16_tflops = 0;  // peak dense (no sparsity)
  double fp16_tflops = 0;
  double fp8_tflops = 0;     // peak dense fp8, 0 = not given (listed; steps price bf16/fp16)
  // Peak memory (HBM, GDDR) bandwidth from the datasheet, TB/s: what prices
  // a step's memory-bound work beside its products (model/non_gemm.hpp).
  // 0 = not given: that work is then not priced, and the step says so.
  double memory_tbps = 0;
  std::string interconnect;  // "NVLink 4, 900 GB/s total" or "PCIe Gen4 x16"
  std::string node;          // default node preset
  std::string source;
  // The names NVML (nvidia-smi) gives this card ("NVIDIA H200"): how a
  // record's inventory finds its preset. Matched whole, ignoring case.
  std::vector<std::string> nvml_names;
  GemmPresetCurve gemm_curve;  // empty: no published curve; the model says so
  AttentionPresetCurve attention_curve;  // empty: attention at the GEMM rate, and the step says so
};

struct Presets {
  std::vector<NetworkPreset> networks;
  std::vector<NodePreset> nodes;
  std::vector<GpuPreset> gpus;
  // Where the set came from ("built in" or "--presets DIR"), and for each
  // preset a --presets-add file laid over it ("gpu h100-sxm" -> the file).
  std::string base = "built in";
  std::map<std::string, std::string> added_from;
  // What the --presets-add files changed, one line each ("FILE: adds gpu 'x'",
  // "FILE: gpu 'h100-sxm' overrides the built-in preset").
  std::vector<std::string> changes;

  // Look-ups throw fb::UsageError naming `what` and listing the names known.
  const NetworkPreset& network(std::string_view name, std::string_view what) const;
  const NodePreset& node(std::string_view name, std::string_view what) const;
  const GpuPreset& gpu(std::string_view name, std::string_view what) const;
};

// Parsers over one file's text each (fuzzable); throw fb::UsageError.
std::vector<NetworkPreset> parse_network_presets(std::string_view yaml_text);
std::vector<NodePreset> parse_node_presets(std::string_view yaml_text);
std::vector<GpuPreset> parse_gpu_presets(std::string_view yaml_text);

// The presets built from profiles/presets/*.yaml at compile time.
const Presets& builtin_presets();

// Reads networks.yaml, nodes.yaml and gpus.yaml from a folder (--presets):
// the whole set, the built-in one left out.
Presets load_presets(const std::string& folder);

// A user's presets file (--presets-add, a quotes file's `presets:`): any of
// the sections networks:, nodes:, gpus:, each entry as in the built-in files
// (the same keys, a source, rates with units). An entry whose name the set
// has replaces that preset, any other is added; `changes` says which. Errors
// name the file, the entry and the key. Every GPU must name a known node.
Presets add_presets(Presets presets, const std::string& path);
Presets add_presets_text(Presets presets, std::string_view yaml_text, const std::string& file);

// The preset whose nvml_names holds `nvml_name` (whole, any case); nullptr
// when none does.
const GpuPreset* gpu_by_nvml_name(const Presets& presets, std::string_view nvml_name);

}  // namespace fb::model
