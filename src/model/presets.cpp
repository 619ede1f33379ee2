// Preset parsing and look-up. The figures themselves live in
// profiles/presets/*.yaml, each with its source.
#include "fabricbench/model/presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "builtin_presets.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/units.hpp"
#include "yaml_fields.hpp"

namespace fb::model {
namespace {

using detail::Fields;

// The entries of one section of a presets file; `file` names it in errors
// ("networks.yaml: networks[2]: rate: ...", "my.yaml: gpus[0]: ...").
template <typename T, typename ParseOne>
std::vector<T> parse_section(const Fields& top, const char* key, const std::string& file, ParseOne parse_one) {
  std::vector<T> out;
  for (const YAML::Node& item : detail::list(top, key)) {
    out.push_back(parse_one(item, fmt::format("{}: {}[{}]", file, key, out.size())));
    for (std::size_t i = 0; i + 1 < out.size(); ++i)
      if (out[i].name == out.back().name)
        throw UsageError(fmt::format("{}: '{}' is defined twice", file, out.back().name));
  }
  return out;
}

template <typename T, typename ParseOne>
std::vector<T> parse_list(std::string_view yaml_text, const char* file, const char* key, ParseOne parse_one) {
  const YAML::Node doc = detail::load_yaml(yaml_text, file);
  const Fields top(doc, file, {key});
  return parse_section<T>(top, key, file, parse_one);
}

std::string preset_name(const Fields& f) {
  std::string name = f.text("name");
  if (name.empty() || name.find_first_of(" \t@/") != std::string::npos)
    throw UsageError(fmt::format("{} '{}': names are one word without '@', '/' or spaces", f.name("name"), name));
  return name;
}

double achievable(const Fields& f) {
  const double a = f.fraction_or("achievable", 1.0);
  if (a <= 0) throw UsageError(fmt::format("{}: must be above 0", f.name("achievable")));
  return a;
}

// Names of each enum, in the enum's order; the static_asserts keep a new
// value from going without its name.
constexpr std::array<std::string_view, 2> kTransports{"rdma", "tcp"};
constexpr std::array<std::string_view, 2> kFabrics{"nvlink", "pcie"};
constexpr std::array<std::string_view, kGpuArchs> kArchs{"ampere", "ada", "hopper", "blackwell", "cdna3"};
// Why an architecture's figures are the datasheet's alone, "" where the NCCL
// backend measures it.
constexpr std::array<std::string_view, kGpuArchs> kUnmeasured{
    "", "", "", "",
    "an AMD GPU: no backend of fabricbench measures it yet (RCCL is not supported), so its figures are the "
    "datasheet's, and its collectives are priced with NCCL's tuning model standing in for RCCL's"};
static_assert(static_cast<std::size_t>(Transport::tcp) + 1 == kTransports.size());
static_assert(static_cast<std::size_t>(NodeFabric::pcie) + 1 == kFabrics.size());
static_assert(kArchs.size() == kGpuArchs && kUnmeasured.size() == kGpuArchs);

template <typename E, std::size_t N>
E enum_of(const Fields& f, std::string_view key, const std::array<std::string_view, N>& names) {
  const std::string v = f.text(key);
  std::string allowed;
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == v) return static_cast<E>(i);
    allowed += (allowed.empty() ? "" : ", ") + std::string(names[i]);
  }
  throw UsageError(fmt::format("{} '{}': allowed: {}", f.name(key), v, allowed));
}

template <typename T>
const T& find(const std::vector<T>& list, std::string_view name, std::string_view what, const char* kind) {
  std::string names;
  for (const auto& p : list) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw UsageError(fmt::format("{}: no such {} preset '{}'; known: {}", what, kind, name, names));
}

}  // namespace

std::string_view name(Transport t) { return kTransports.at(static_cast<std::size_t>(t)); }
std::string_view name(NodeFabric f) { return kFabrics.at(static_cast<std::size_t>(f)); }
std::string_view name(GpuArch a) { return kArchs.at(static_cast<std::size_t>(a)); }
std::string_view unmeasured_reason(GpuArch a) { return kUnmeasured.at(static_cast<std::size_t>(a)); }

namespace {

NetworkPreset network_preset(const YAML::Node& n, std::string where) {
  const Fields f(n, std::move(where),
                 {"name", "description", "rate", "achievable", "transport", "extra_hop_us", "nics_per_node", "source"});
  NetworkPreset p;
  p.name = preset_name(f);
  p.description = f.optional_text("description").value_or("");
  p.line_gbps = f.rate_gbps("rate");
  p.achievable = achievable(f);
  p.transport = enum_of<Transport>(f, "transport", kTransports);
  p.extra_hop_us = f.number_or("extra_hop_us", 0);
  p.nics_per_node = f.integer_or("nics_per_node", 1);
  if (p.nics_per_node > 64) throw UsageError(fmt::format("{}: 1 to 64", f.name("nics_per_node")));
  p.source = f.text("source");
  return p;
}

}  // namespace

std::vector<NetworkPreset> parse_network_presets(std::string_view yaml_text) {
  return parse_list<NetworkPreset>(yaml_text, "networks.yaml", "networks", network_preset);
}

namespace {

// An NVLink domain is whole hosts joined by NVLink switches: a multiple of
// the host's GPUs, and NVLink (a PCIe node has no switch to join).
int domain_gpus(const Fields& f, const NodePreset& p) {
  const int gpus = f.integer_or("domain_gpus", p.gpus);
  if (gpus < p.gpus || gpus % p.gpus != 0 || gpus > 100000)
    throw UsageError(fmt::format("{} {}: a whole number of hosts of {} GPUs, at most 100000 (GB200 NVL72: 72)",
                                 f.name("domain_gpus"), gpus, p.gpus));
  if (gpus > p.gpus && p.fabric != NodeFabric::nvlink)
    throw UsageError(
        fmt::format("{}: a domain across hosts needs fabric: nvlink (NVLink switches)", f.name("domain_gpus")));
  return gpus;
}

NodePreset node_preset(const YAML::Node& n, std::string where) {
  const Fields f(n, std::move(where),
                 {"name", "description", "gpus", "domain_gpus", "rate", "achievable", "fabric", "nvls", "extra_hop_us",
                  "source", "caveat"});
  NodePreset p;
  p.name = preset_name(f);
  p.description = f.optional_text("description").value_or("");
  p.gpus = f.integer("gpus");
  if (p.gpus > 1024) throw UsageError(fmt::format("{}: at most 1024", f.name("gpus")));
  p.line_gbps = f.rate_gbps("rate");
  p.achievable = achievable(f);
  p.fabric = enum_of<NodeFabric>(f, "fabric", kFabrics);
  if (f.has("nvls")) p.nvls_gbps = f.rate_gbps("nvls");
  if (p.nvls_gbps > 0 && p.fabric != NodeFabric::nvlink)
    throw UsageError(fmt::format("{}: NVLS needs fabric: nvlink (NVSwitch multicast)", f.name("nvls")));
  p.extra_hop_us = f.number_or("extra_hop_us", 0);
  p.domain_gpus = domain_gpus(f, p);
  p.source = f.text("source");
  p.caveat = f.optional_text("caveat").value_or("");
  return p;
}

}  // namespace

std::vector<NodePreset> parse_node_presets(std::string_view yaml_text) {
  return parse_list<NodePreset>(yaml_text, "nodes.yaml", "nodes", node_preset);
}

namespace {

// One dtype's points: [size, TFLOP/s] pairs, sizes strictly ascending as the
// source printed them (a file out of order is more likely mistyped than
// meant), every figure positive.
std::vector<std::pair<double, double>> curve_points(const Fields& f, std::string_view key) {
  const std::string where = f.name(key);
  std::vector<std::pair<double, double>> out;
  for (const YAML::Node& item : detail::list(f, key)) {
    if (!item.IsSequence() || item.size() != 2 || !item[0].IsScalar() || !item[1].IsScalar())
      throw UsageError(fmt::format("{}: each point is [size, tflops], e.g. [4096, 790]", where));
    const double size = parse_number(item[0].Scalar(), where);
    const double tflops = parse_number(item[1].Scalar(), where);
    if (!(size >= 1) || !(tflops > 0) || size > detail::kMaxNumber || tflops > detail::kMaxNumber)
      throw UsageError(fmt::format("{}: sizes and TFLOP/s must be positive and at most 1e15", where));
    if (!out.empty() && size <= out.back().first)
      throw UsageError(fmt::format("{}: sizes must ascend ({} after {}): list the points smallest first", where, size,
                                   out.back().first));
    out.emplace_back(size, tflops);
  }
  if (out.empty()) throw UsageError(fmt::format("{}: the list is empty", where));
  return out;
}

GemmPresetCurve gemm_preset_curve(const Fields& gpu) {
  const Fields f(gpu.node("gemm_curve"), gpu.name("gemm_curve"), {"bf16", "fp16", "source"});
  GemmPresetCurve c;
  c.bf16 = curve_points(f, "bf16");
  c.fp16 = f.has("fp16") ? curve_points(f, "fp16") : c.bf16;
  c.source = f.optional_text("source").value_or("");
  if (c.source.empty())
    throw UsageError(
        fmt::format("{}: missing: every curve cites the benchmark its points come from", f.name("source")));
  return c;
}

AttentionPresetCurve attention_preset_curve(const Fields& gpu) {
  const Fields f(gpu.node("attention_curve"), gpu.name("attention_curve"),
                 {"head_dim", "forward_causal", "backward", "source"});
  AttentionPresetCurve c;
  c.head_dim = f.integer("head_dim");
  c.forward_causal = curve_points(f, "forward_causal");
  c.backward = curve_points(f, "backward");
  c.source = f.optional_text("source").value_or("");
  if (c.source.empty())
    throw UsageError(
        fmt::format("{}: missing: every curve cites the benchmark its points come from", f.name("source")));
  return c;
}

GpuPreset gpu_preset(const YAML::Node& n, std::string where) {
  const Fields f(n, std::move(where),
                 {"name", "description", "arch", "memory_gib", "bf16_tflops", "fp16_tflops", "fp8_tflops",
                  "memory_tbps", "interconnect", "node", "source", "nvml_names", "gemm_curve", "attention_curve"});
  GpuPreset p;
  p.name = preset_name(f);
  p.description = f.optional_text("description").value_or("");
  p.arch = enum_of<GpuArch>(f, "arch", kArchs);
  p.memory_gib = f.number("memory_gib");
  p.bf16_tflops = f.number("bf16_tflops");
  p.fp16_tflops = f.number("fp16_tflops");
  if (f.has("fp8_tflops")) p.fp8_tflops = f.number("fp8_tflops");
  if (p.memory_gib <= 0 || p.bf16_tflops <= 0 || p.fp16_tflops <= 0 || (f.has("fp8_tflops") && p.fp8_tflops <= 0))
    throw UsageError(fmt::format("{}: memory_gib and TFLOP/s must be positive", f.where()));
  if (f.has("memory_tbps")) {
    p.memory_tbps = f.number("memory_tbps");
    if (p.memory_tbps <= 0) throw UsageError(fmt::format("{}: must be positive, TB/s", f.name("memory_tbps")));
  }
  p.interconnect = f.text("interconnect");
  p.node = f.text("node");
  p.source = f.text("source");
  if (f.has("nvml_names"))
    for (const YAML::Node& name : detail::list(f, "nvml_names")) {
      if (!name.IsScalar() || name.as<std::string>().empty())
        throw UsageError(fmt::format("{}: a list of the card's names as nvidia-smi prints them (\"NVIDIA H200\")",
                                     f.name("nvml_names")));
      p.nvml_names.push_back(name.as<std::string>());
    }
  if (f.has("gemm_curve")) p.gemm_curve = gemm_preset_curve(f);
  if (f.has("attention_curve")) p.attention_curve = attention_preset_curve(f);
  return p;
}

}  // namespace

std::vector<GpuPreset> parse_gpu_presets(std::string_view yaml_text) {
  return parse_list<GpuPreset>(yaml_text, "gpus.yaml", "gpus", gpu_preset);
}

const NetworkPreset& Presets::network(std::string_view name, std::string_view what) const {
  return find(networks, name, what, "network");
}
const NodePreset& Presets::node(std::string_view name, std::string_view what) const {
  return find(nodes, name, what, "node");
}
const GpuPreset& Presets::gpu(std::string_view name, std::string_view what) const {
  return find(gpus, name, what, "GPU");
}

const GpuPreset* gpu_by_nvml_name(const Presets& presets, std::string_view nvml_name) {
  const auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
             return std::tolower(x) == std::tolower(y);
           });
  };
  for (const GpuPreset& p : presets.gpus)
    for (const std::string& n : p.nvml_names)
      if (same(n, nvml_name)) return &p;
  return nullptr;
}

const Presets& builtin_presets() {
  static const Presets presets = [] {
    Presets p;
    p.networks = parse_network_presets(detail::kNetworksYaml);
    p.nodes = parse_node_presets(detail::kNodesYaml);
    p.gpus = parse_gpu_presets(detail::kGpusYaml);
    return p;
  }();
  return presets;
}

Presets load_presets(const std::string& folder) {
  Presets p;
  p.base = "--presets " + folder;
  p.networks = detail::parse_file(folder + "/networks.yaml", "presets file", parse_network_presets);
  p.nodes = detail::parse_file(folder + "/nodes.yaml", "presets file", parse_node_presets);
  p.gpus = detail::parse_file(folder + "/gpus.yaml", "presets file", parse_gpu_presets);
  for (const auto& g : p.gpus) p.node(g.node, fmt::format("gpus.yaml: {}: node", g.name));
  return p;
}

namespace {

// Lays `items` over `list`: one with a name the list has replaces it, any
// other is appended; each says so in `p.changes`.
template <typename T>
void lay_over(Presets& p, std::vector<T>& list, std::vector<T> items, const char* kind, const std::string& file) {
  for (T& item : items) {
    const std::string key = fmt::format("{} {}", kind, item.name);
    const auto same = std::find_if(list.begin(), list.end(), [&](const T& t) { return t.name == item.name; });
    if (same == list.end()) {
      p.changes.push_back(fmt::format("{}: adds {} '{}'", file, kind, item.name));
      list.push_back(std::move(item));
    } else {
      const auto earlier = p.added_from.find(key);
      p.changes.push_back(fmt::format("{}: {} '{}' overrides the {}", file, kind, item.name,
                                      earlier != p.added_from.end() ? "one from " + earlier->second
                                      : p.base == "built in"        ? std::string("built-in preset")
                                                                    : "preset from " + p.base));
      *same = std::move(item);
    }
    p.added_from[key] = file;
  }
}

}  // namespace

Presets add_presets_text(Presets presets, std::string_view yaml_text, const std::string& file) {
  const YAML::Node doc = detail::load_yaml(yaml_text, file);
  const Fields top(doc, file, {"networks", "nodes", "gpus"});
  if (!top.has("networks") && !top.has("nodes") && !top.has("gpus"))
    throw UsageError(fmt::format("{}: no presets: give any of networks:, nodes:, gpus: (docs/model.md#presets)", file));
  // All three parsed before any is laid over: a bad entry changes nothing.
  std::vector<NetworkPreset> networks;
  std::vector<NodePreset> nodes;
  std::vector<GpuPreset> gpus;
  if (top.has("networks")) networks = parse_section<NetworkPreset>(top, "networks", file, network_preset);
  if (top.has("nodes")) nodes = parse_section<NodePreset>(top, "nodes", file, node_preset);
  if (top.has("gpus")) gpus = parse_section<GpuPreset>(top, "gpus", file, gpu_preset);
  lay_over(presets, presets.networks, std::move(networks), "network", file);
  lay_over(presets, presets.nodes, std::move(nodes), "node", file);
  lay_over(presets, presets.gpus, std::move(gpus), "gpu", file);
  for (const auto& g : presets.gpus) presets.node(g.node, fmt::format("{}: gpu '{}': node", file, g.name));
  return presets;
}

Presets add_presets(Presets presets, const std::string& path) {
  return add_presets_text(std::move(presets), detail::read_file(path, "presets file"), path);
}

}  // namespace fb::model
