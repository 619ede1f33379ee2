// A step assembled from the formulas (formulas.cpp), NCCL's collective costs
// (collective.cpp) and the links of a fabric.
#include "fabricbench/model/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention.hpp"
#include "compute_rate.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/domain.hpp"
#include "fabricbench/model/formulas.hpp"
#include "fabricbench/model/non_gemm.hpp"

namespace fb::model {
namespace {

struct Context {
  const Workload& w;
  const Parallel& p;
  const Fabric& fabric;  // as collectives see it: an NVLink domain is one node (model/domain.hpp)
  const DomainLayout& domain;
  double compute_us;   // the fullest stage's: what its communication can hide under
  double backward_us;  // all micro-batches
  double forward_us;
};

// Where a group of `size` ranks at `stride` sits (Megatron's rank order:
// tp fastest, then dp, then pp).
GroupShape shape_of(int size, int stride, int gpus_per_node) {
  if (stride >= gpus_per_node) return {1, size, gpus_per_node};
  const int per_node = std::min(size, gpus_per_node / stride);
  return {per_node, size / per_node, gpus_per_node / per_node};
}

// A group as collectives see it (inside an NVLink domain or across
// domains) and whether it spans hosts inside its domain: then its NVLink
// traffic crosses the NVLink switches between hosts, not the network.
struct Placed {
  GroupShape shape;
  bool across_hosts = false;
};

Placed place(const Context& c, int size, int stride) {
  const GroupShape on_hosts = shape_of(size, stride, c.p.gpus_per_node);
  return {shape_of(size, stride, c.domain.gpus()), c.domain.spans_hosts() && on_hosts.nodes > 1};
}

// A framework that reaches only `share` of NCCL's bus bandwidth stretches
// the bandwidth term of each call; the latency is NCCL's.
void apply_share(CollectiveCost& cost, const std::string& group, double share) {
  if (share >= 1) return;
  cost.time_us = cost.latency_us + (cost.time_us - cost.latency_us) / share;
  cost.busbw_gbps *= share;
  cost.formula += fmt::format("; bandwidth term / {:.3g} (busbw_share: {})", share, group);
}

// `where` says which traffic left the NVLink domain: intra (one host),
// nvlink-domain (hosts of one domain, on NVLink), inter or intra+inter (the
// network, between hosts or between domains).
void price(const Context& c, CommItem& item, const Placed& placed, double calls) {
  CollectiveCost cost = collective_cost(c.fabric, item.op, item.bytes_per_call, placed.shape);
  apply_share(cost, item.group, c.w.busbw_share.of(item.group));
  item.where = cost.where == "intra" && placed.across_hosts ? "nvlink-domain" : cost.where;
  item.calls = calls;
  item.time_per_call_us = cost.time_us;
  item.total_us = cost.time_us * calls;
  // Per host: a domain's NICs are its hosts' together.
  item.inter_wire_bytes = cost.inter_wire_bytes * calls / c.domain.hosts_per_domain;
  item.basis = cost.basis;
  item.algorithm = cost.algorithm;
  item.protocol = cost.protocol;
  item.formula = cost.formula;
  item.latency_us = cost.latency_us;
  item.busbw_gbps = cost.busbw_gbps;
}

CommItem make_item(std::string name, const char* group, Op op, int ranks) {
  CommItem item;
  item.name = std::move(name);
  item.group = group;
  item.op = op;
  item.ranks = ranks;
  return item;
}

// `hiding_us`: how much of the window the calls can actually hide under
// (default: all of it).
void expose(CommItem& item, double window_us, double floor_us = 0, double hiding_us = -1) {
  item.window_us = window_us;
  if (hiding_us < 0) hiding_us = window_us;
  item.exposed_us = window_us > 0 ? std::max(floor_us, item.total_us - hiding_us) : item.total_us;
  item.exposed_us = std::min(item.exposed_us, item.total_us);
}

// Calls issued evenly through a window, each as the compute before it ends
// (gradient buckets as they become ready, prefetched parameters ahead of
// their layer): n calls of d us per pass in a window W expose at least one
// call per pass and otherwise what the (n-1)/n of the window before the last
// one cannot hold, on one communication stream (`fabricbench step` runs
// exactly this).
void expose_stream(CommItem& item, double window_us, double calls_per_pass, double passes) {
  if (window_us <= 0) return expose(item, 0);
  const double n = std::max(1.0, calls_per_pass);
  expose(item, window_us, item.time_per_call_us * passes, window_us * (n - 1) / n);
}

void add_tp(const Context& c, std::vector<CommItem>& items) {
  if (c.p.tp <= 1) return;
  CommItem item = make_item("TP all-reduce", "tp", Op::all_reduce, c.p.tp);
  item.bytes_per_call = tp_allreduce_bytes(c.w.micro_batch, c.w.seq_len, c.w.hidden, c.w.act_bytes);
  const double calls =
      static_cast<double>(c.p.micro_batches) * c.p.stage_layers * tp_allreduces_per_layer(c.w.recompute);
  price(c, item, place(c, c.p.tp, 1), calls);
  expose(item, c.w.overlap.tp * c.compute_us);
  items.push_back(item);
}

// DDP and ZeRO-1/2: buckets of `bucket` bytes (PyTorch DDP's bucket_cap_mb,
// Horovod's fusion buffer).
void add_dp_bucketed(const Context& c, std::vector<CommItem>& items, double params) {
  const int m = c.p.micro_batches;
  for (const DpCollective& d : dp_collectives(c.w.zero)) {
    const std::string prefix = c.w.zero == 0 ? "DP " : "ZeRO-" + std::to_string(c.w.zero) + " ";
    CommItem item = make_item(prefix + d.name, "dp", d.op, c.p.dp);
    const double bytes = params * (d.gradients ? c.w.grad_bytes : c.w.param_bytes);
    const double per_pass = bucket_calls(bytes, static_cast<double>(c.w.bucket_bytes), 1);
    const double passes = d.per_micro_batch > 0 ? static_cast<double>(m) * d.per_micro_batch : 1.0;
    item.bytes_per_call = bytes / per_pass;
    price(c, item, place(c, c.p.dp, c.p.tp), per_pass * passes);
    // Once per step it can hide only under one micro-batch's pass.
    const double pass_us = d.window == Pass::backward ? c.backward_us : c.forward_us;
    const double window = (d.per_micro_batch > 0 ? pass_us : pass_us / m) *
                          (d.gradients ? c.w.overlap.grad_reduce : c.w.overlap.param_gather);
    if (d.gradients) {
      expose_stream(item, window, per_pass * passes, 1);
    } else {
      expose(item, window);
    }
    items.push_back(item);
  }
}

// ZeRO-3 as DeepSpeed runs it (formulas.cpp, zero3_calls): a gather per
// module and pass, prefetched ahead when the prefetch bucket allows, fewer
// in the backward for the modules still live; gradients reduce-scattered in
// reduce buckets every micro-batch.
void add_zero3(const Context& c, std::vector<CommItem>& items, double params) {
  const double m = c.p.micro_batches;
  const Zero3Calls z = zero3_calls(c.w.zero3, params, c.p.stage_layers);
  const Placed shape = place(c, c.p.dp, c.p.tp);
  const double prefetch = z.prefetch_depth > 0 ? c.w.overlap.param_gather : 0.0;
  struct Gather {
    const char* name;
    double per_pass;
    double pass_us;
  };
  for (const Gather g : {Gather{"ZeRO-3 parameter all-gather (forward)", z.forward_gathers, c.forward_us},
                         Gather{"ZeRO-3 parameter all-gather (backward)", z.backward_gathers, c.backward_us}}) {
    if (g.per_pass <= 0) continue;
    CommItem item = make_item(g.name, "dp", Op::all_gather, c.p.dp);
    item.bytes_per_call = z.module_params * c.w.param_bytes;
    price(c, item, shape, g.per_pass * m);
    expose_stream(item, g.pass_us * prefetch, g.per_pass, m);  // the first gather of each pass waits
    items.push_back(item);
  }
  CommItem rs = make_item("ZeRO-3 gradient reduce-scatter", "dp", Op::reduce_scatter, c.p.dp);
  rs.bytes_per_call = params * c.w.grad_bytes / z.reduce_scatters;
  price(c, rs, shape, z.reduce_scatters * m);
  expose_stream(rs, c.backward_us * c.w.overlap.grad_reduce, z.reduce_scatters * m, 1);
  items.push_back(rs);
}

void add_dp(const Context& c, std::vector<CommItem>& items) {
  if (c.p.dp <= 1) return;
  const double params = params_per_gpu(c.w, c.p);
  if (c.w.zero == 3) return add_zero3(c, items, params);
  add_dp_bucketed(c, items, params);
}

// Megatron-LM's pipeline sends (Narayanan et al. SC 2021, 4.1): with the
// scatter/gather optimisation each of a stage's tp ranks sends 1/tp of the
// b*s*h activations and the receiving stage all-gathers them over its node.
void add_pp(const Context& c, std::vector<CommItem>& items) {
  if (c.p.pp <= 1) return;
  const int g = c.domain.gpus(), stage = c.p.tp * c.p.dp;
  const double full = tp_allreduce_bytes(c.w.micro_batch, c.w.seq_len, c.w.hidden, c.w.act_bytes);
  const bool split = c.w.pp_scatter_gather && c.p.tp > 1;
  const double messages = pp_messages_per_step(c.p.micro_batches, c.p.virtual_stages);
  CommItem item = make_item(split ? "PP send/recv (1/tp each)" : "PP send/recv", "pp", Op::sendrecv, 2);
  // Stage boundaries cross nodes (NVLink domains) once the pipeline spans
  // more than one; then every GPU of the stage on that node sends at once.
  const bool crosses = static_cast<long long>(stage) * c.p.pp > g;
  const bool across_hosts = static_cast<long long>(stage) * c.p.pp > c.p.gpus_per_node;
  const Placed shape{crosses ? GroupShape{1, 2, std::min(g, stage)} : GroupShape{2, 1, 1},
                     !crosses && across_hosts && c.domain.spans_hosts()};
  item.bytes_per_call = split ? full / c.p.tp : full;
  price(c, item, shape, messages);
  expose(item, c.w.overlap.pp * c.compute_us);
  items.push_back(item);
  if (!split) return;
  CommItem gather = make_item("PP all-gather (scatter/gather)", "tp", Op::all_gather, c.p.tp);
  gather.bytes_per_call = full;
  price(c, gather, place(c, c.p.tp, 1), messages);
  expose(gather, c.w.overlap.pp * c.compute_us);
  items.push_back(gather);
}

double peak_of(const Workload& w, const GpuPreset& g) { return w.dtype == "fp16" ? g.fp16_tflops : g.bf16_tflops; }

double model_flops_per_step(const Workload& w) {
  if (!w.transformer()) return 3.0 * w.forward_flops_per_sample * w.global_batch;  // backward = 2 x forward
  return w.tokens_per_step() * model_flops_per_token(w.params, w.layers, w.hidden, w.seq_len);
}

double hardware_flops_per_step(const Workload& w, double model_flops) {
  if (!w.transformer()) return w.recompute == Recompute::full ? model_flops * 4.0 / 3.0 : model_flops;
  const double per_token = model_flops / w.tokens_per_step();
  return w.tokens_per_step() * hardware_flops_per_token(per_token, w.recompute, w.layers, w.hidden, w.seq_len);
}

std::string overlap_words(const Workload& w) {
  return fmt::format("overlap: grad_reduce {:.2g}, param_gather {:.2g}, tp {:.2g}, pp {:.2g} of their windows "
                     "(0 = exposed)",
                     w.overlap.grad_reduce, w.overlap.param_gather, w.overlap.tp, w.overlap.pp);
}

std::string share_words(const Workload& w) {
  const BusbwShare& b = w.busbw_share;
  return fmt::format("busbw share: tp {:.3g}, dp {:.3g}, pp {:.3g} of the bus bandwidth NCCL reaches (1 = NCCL's "
                     "own; a framework's losses are not modelled unless stated)",
                     b.tp, b.dp, b.pp);
}

std::string bucket_words(const Workload& w, const Parallel& p) {
  if (p.dp <= 1) return "data parallel: none (dp 1)";
  if (w.zero != 3 && w.bucket_bytes == 0)  // bucket_calls: one call for the whole gradient
    return fmt::format("buckets: none (bucket 0): the whole gradient in one {} per pass (ZeRO-{})",
                       w.zero == 0 ? "all-reduce" : "reduce-scatter", w.zero);
  if (w.zero != 3)
    return fmt::format("buckets: {} of {:.4g} MiB per call (ZeRO-{})",
                       w.zero == 0 ? "gradient all-reduce" : "gradient reduce-scatter",
                       static_cast<double>(w.bucket_bytes) / (1 << 20), w.zero);
  const Zero3Calls z = zero3_calls(w.zero3, params_per_gpu(w, p), p.stage_layers);
  return fmt::format("ZeRO-3 (DeepSpeed): {} fetches per layer of {:.3g} parameters each, prefetch bucket {:.3g} "
                     "({:.0f} modules ahead), max live {:.3g}, reuse distance {:.3g} ({:.0f} modules kept for the "
                     "backward), reduce bucket {:.3g} ({:.0f} reduce-scatters per micro-batch)",
                     w.zero3.modules_per_layer, z.module_params, w.zero3.prefetch_bucket, z.prefetch_depth,
                     w.zero3.max_live, w.zero3.max_reuse_distance, z.kept_modules, w.zero3.reduce_bucket,
                     z.reduce_scatters);
}

std::string pipeline_words(const Workload& w, const Parallel& p) {
  if (p.pp <= 1) return "";
  const double even = static_cast<double>(w.layers) / p.pp;
  return fmt::format("pipeline: pp {} x {} chunks, {} micro-batches, {} layers on the fullest stage ({:.3g} on "
                     "average){}",
                     p.pp, p.virtual_stages, p.micro_batches, p.stage_layers, even,
                     w.pp_scatter_gather && p.tp > 1 ? ", sends scattered over tp and gathered on arrival" : "");
}

// The compute sources whose rate prices the products alone (a GEMM curve):
// the step's memory-bound work and attention's kernel are priced beside
// them. An MFU or a stated TFLOP/s is a whole step's rate and holds them.
constexpr std::string_view kProductsOnly[] = {"measured_curve", "stated_curve", "preset_curve"};

bool products_only(std::string_view source) {
  return std::find(std::begin(kProductsOnly), std::end(kProductsOnly), source) != std::end(kProductsOnly);
}

// Per GPU per step, the layers' share on an average stage (the fullest
// stage's extra goes with the compute's into the stage imbalance).
struct NonGemmTime {
  double forward_us = 0, backward_us = 0, optimizer_us = 0, bytes = 0;
  std::string how, caveat;
};

// The kernels the workload's settings add or leave out, in words.
std::string kernel_words(const Workload& w) {
  std::string out = w.flash_attention ? "" : ", softmax";
  if (w.dropout > 0) out += ", dropout";
  if (w.rotary) out += ", rotary embedding";
  return out;
}

std::string model_words(const Workload& w, double bytes) {
  return fmt::format("; the embedding{} {:.4g} MB per micro-batch on its stage (averaged over the stages)",
                     w.vocab > 0 ? " and the loss" : " (the loss not priced: no model: vocab)", bytes / 1e6);
}

// What the backward repeats of the forward's non-GEMM work.
std::string_view recompute_words(const Workload& w) {
  if (w.recompute == Recompute::full) return ", the forward's again for recompute";
  if (w.recompute == Recompute::selective && !w.flash_attention) return ", the softmax's forward again for recompute";
  return "";
}

NonGemmTime non_gemm_time(const Workload& w, const Parallel& p, const GpuPreset& gpu, std::string_view source) {
  NonGemmTime t;
  if (!products_only(source)) {
    t.how = fmt::format("non-GEMM work (norms, activations, optimizer): inside the {} rate, a whole step's", source);
    return t;
  }
  if (!w.transformer()) {
    t.how = "non-GEMM work: not priced (a model given by its forward FLOPs has no layer shapes)";
    return t;
  }
  if (gpu.memory_tbps <= 0) {
    t.how = fmt::format("non-GEMM work: not priced ({} has no memory bandwidth in its preset)", gpu.name);
    t.caveat = fmt::format(
        "{}'s preset gives no memory bandwidth (memory_tbps): the step's norms, activations and "
        "optimizer step are not priced, only its products",
        gpu.name);
    return t;
  }
  // The embedding runs on the first stage and the loss on the last: an
  // average stage carries 1/pp of them.
  const double layer_passes = static_cast<double>(w.layers) / p.pp * p.micro_batches;
  const double model_passes = static_cast<double>(p.micro_batches) / p.pp;
  const double forward = layer_non_gemm_bytes(w, Pass::forward), backward = layer_non_gemm_bytes(w, Pass::backward);
  const double model_forward = model_non_gemm_bytes(w, Pass::forward);
  const double model_backward = model_non_gemm_bytes(w, Pass::backward);
  const double per_param = optimizer_bytes_per_param(w), params = optimizer_params(w, p);
  const double forward_bytes = forward * layer_passes + model_forward * model_passes;
  const double backward_bytes = backward * layer_passes + model_backward * model_passes;
  t.forward_us = memory_time_us(forward_bytes, gpu.memory_tbps);
  t.backward_us = memory_time_us(backward_bytes, gpu.memory_tbps);
  t.optimizer_us = memory_time_us(per_param * params, gpu.memory_tbps);
  t.bytes = forward_bytes + backward_bytes + per_param * params;
  t.how = fmt::format(
      "non-GEMM work: {:.4g} GB per GPU per step at {}'s {:.4g} TB/s memory bandwidth = {:.4g} ms: per layer and "
      "micro-batch {:.4g} MB forward and {:.4g} MB backward{} (norms, GeLU, residual adds{}, one kernel each reading "
      "its inputs and writing its outputs once{}){}, the optimizer {:.0f} bytes per parameter over {:.4g} parameters "
      "(one fused Adam pass and the gradient norm)",
      t.bytes / 1e9, gpu.name, gpu.memory_tbps, (t.forward_us + t.backward_us + t.optimizer_us) / 1e3, forward / 1e6,
      backward / 1e6, recompute_words(w), kernel_words(w),
      w.flash_attention ? "; the softmax inside flash attention" : "", model_words(w, model_forward + model_backward),
      per_param, params);
  return t;
}

// The step without the bandwidth target.
StepCost assemble(const Workload& w, const Fabric& fabric, const Presets& presets) {
  StepCost s;
  s.parallel = resolve_parallel(w);
  const Parallel& p = s.parallel;
  const GpuPreset& gpu = presets.gpu(w.cluster.gpu, "cluster: gpu");
  s.gpu = gpu.name;
  s.node = fabric.intra.label;
  s.network = fabric.inter.label;
  s.network_line_gbps = fabric.inter.line_gbps;
  s.network_bw_gbps = fabric.inter.bw_gbps;
  s.tokens = w.tokens_per_step();
  s.model_flops = model_flops_per_step(w);
  const double hardware = hardware_flops_per_step(w, s.model_flops);
  const detail::ComputeRate rate = detail::compute_rate(w, gpu, presets, hardware / s.model_flops);
  s.rate_tflops = rate.tflops;
  s.compute_source = rate.source;
  // Attention's products in flash attention's own kernel where the GPU has
  // its curve; the rest of the hardware FLOPs at the rate.
  const detail::AttentionTime attention = products_only(rate.source) && w.transformer()
                                              ? detail::attention_time(w, p, gpu)
                                              : detail::AttentionTime{};
  s.attention_us = attention.forward_us + attention.backward_us;
  s.compute_us = (hardware / p.gpus - attention.model_flops) / (rate.tflops * 1e6) + s.attention_us;
  const NonGemmTime non_gemm = non_gemm_time(w, p, gpu, rate.source);
  s.optimizer_us = non_gemm.optimizer_us;
  s.non_gemm_us = non_gemm.forward_us + non_gemm.backward_us + non_gemm.optimizer_us;
  s.non_gemm_bytes = non_gemm.bytes;
  // The fullest stage sets the pipeline's pace (uneven layers). The layers'
  // non-GEMM work runs in their passes; the optimizer step once the
  // pipeline has drained, hiding nothing.
  const double layers_us = s.compute_us + non_gemm.forward_us + non_gemm.backward_us;
  const double imbalance = static_cast<double>(p.stage_layers) * p.pp / w.layers;
  const double stage_us = layers_us * imbalance;
  s.imbalance_us = stage_us - layers_us;
  s.bubble_us = stage_us * bubble_fraction(p.pp, p.virtual_stages, p.micro_batches);
  const double backward_us = (s.compute_us * backward_share(w.recompute) + non_gemm.backward_us) * imbalance;
  const DomainLayout domain = domain_layout(fabric.intra, p.gpus_per_node, p.nodes, p.tp, p.tp * p.dp);
  const Fabric seen = domain_fabric(fabric, domain);
  const Context c{w, p, seen, domain, stage_us, backward_us, stage_us - backward_us};
  add_tp(c, s.items);
  add_dp(c, s.items);
  add_pp(c, s.items);

  for (const auto& item : s.items) {
    s.comm_us += item.total_us;
    s.exposed_us += item.exposed_us;
    s.inter_wire_bytes += item.inter_wire_bytes;
  }
  // Windows of different collectives can name the same compute: never hide
  // more communication than there is compute to hide it under.
  s.exposed_us = std::max(s.exposed_us, s.comm_us - stage_us);
  s.step_us = stage_us + s.bubble_us + s.exposed_us + s.optimizer_us;
  s.comm_share = s.comm_us / (stage_us + s.bubble_us + s.optimizer_us + s.comm_us);
  s.exposed_share = s.exposed_us / s.step_us;
  s.efficiency = (s.compute_us + s.non_gemm_us) / s.step_us;
  s.mfu = s.model_flops / (s.step_us * 1e-6 * p.gpus * peak_of(w, gpu) * 1e12);
  if (!std::isfinite(s.step_us) || !std::isfinite(s.mfu) || !std::isfinite(s.comm_us) || s.step_us <= 0)
    throw UsageError(fmt::format("workload '{}': its numbers give no finite step time (check params, sizes and rates)",
                                 w.name));
  const MemoryFit memory = memory_fit(w, gpu).at(static_cast<std::size_t>(w.zero));
  s.memory_bytes = memory.total_bytes;
  s.memory_capacity_bytes = memory.capacity_bytes;

  s.assumptions.push_back(
      "collectives: NCCL's tuner model (NCCL 2.2x src/graph/tuning.cc): ring, tree (all_reduce), NVLS (all_reduce "
      "in an NVSwitch node) with LL, LL128 and Simple, the fastest per call; measured curves first where the op, "
      "rank count and group shape were measured");
  s.assumptions.push_back("node: " + describe(fabric.intra, false));
  if (p.nodes > 1) s.assumptions.push_back("network: " + describe(fabric.inter, true));
  if (const std::string d = describe(domain, fabric); !d.empty()) s.assumptions.push_back(d);
  s.assumptions.push_back(rate.how + attention.how);
  s.assumptions.push_back(non_gemm.how);
  if (!non_gemm.caveat.empty()) s.caveats.push_back(non_gemm.caveat);
  s.assumptions.push_back(overlap_words(w));
  s.assumptions.push_back(share_words(w));
  s.assumptions.push_back(bucket_words(w, p));
  if (const std::string pipe = pipeline_words(w, p); !pipe.empty()) s.assumptions.push_back(pipe);
  if (const std::string_view why = unmeasured_reason(gpu.arch); !why.empty())
    s.caveats.push_back(fmt::format("{} is {}", gpu.name, why));
  for (const NodePreset& n : presets.nodes)
    if (n.name == fabric.intra.label && !n.caveat.empty()) s.caveats.push_back(n.name + ": " + n.caveat);
  // Only while the workload leaves the framework's share at NCCL's own:
  // one it states is the framework's loss, priced.
  if (w.zero == 3 && p.nodes > 1 && w.busbw_share.dp >= 1)
    s.caveats.push_back(fmt::format(
        "ZeRO-3 across nodes: published DeepSpeed ZeRO-3 steps (175B on 384 to 1536 A100s) took {:.2f}x to {:.2f}x "
        "the step time this model predicts for them at NCCL's bus bandwidth, more with more GPUs at a fixed batch; "
        "read this step time as a lower bound, or state the framework's busbw_share: dp (those runs reached {:.2g} "
        "of NCCL's; docs/model.md)",
        kZero3PublishedOverPredictedFewest, kZero3PublishedOverPredictedMost, kZero3PublishedBusbwShare));
  return s;
}

// The same fabric with a network of `gbps` achievable per node, no measured
// curves (its latency per step kept): what the target search varies.
Fabric with_network_bw(const Fabric& f, double gbps) {
  Fabric out = f;
  out.inter.curves.clear();
  out.inter.bw_gbps = gbps;
  return out;
}

// Exposed share falls as the network gets faster: bisect on log bandwidth.
void find_target(StepCost& s, const Workload& w, const Fabric& fabric, const Presets& presets, double target) {
  s.exposed_target = target;
  if (s.inter_wire_bytes <= 0) return;
  const auto share = [&](double gbps) { return assemble(w, with_network_bw(fabric, gbps), presets).exposed_share; };
  constexpr double kFastest = 1e7, kSlowest = 1e-3;  // GB/s per node
  s.exposed_floor = share(kFastest);
  if (s.exposed_floor > target) {
    s.target_gbps = std::numeric_limits<double>::infinity();
    return;
  }
  double lo = kSlowest, hi = kFastest;
  if (share(lo) <= target) {
    s.target_gbps = lo;
    return;
  }
  for (int i = 0; i < 60 && hi / lo > 1.001; ++i) {
    const double mid = std::sqrt(lo * hi);
    (share(mid) <= target ? hi : lo) = mid;
  }
  s.target_gbps = hi;
}

}  // namespace

Fabric fabric_for(const Workload& w, std::string_view network, const Presets& presets, const std::string& base_dir) {
  Fabric f;
  const GpuPreset& gpu = presets.gpu(w.cluster.gpu, "cluster: gpu");
  f.arch = gpu.arch;
  const std::string& node = w.cluster.node.empty() ? gpu.node : w.cluster.node;
  f.intra = resolve_node(node, presets, base_dir);
  if (!network.empty()) {
    f.inter = resolve_network(network, presets, base_dir);
  } else if (w.cluster.nodes > 1) {
    throw UsageError(fmt::format("{} nodes need a network: a preset with its NIC count such as 1x10gbe or "
                                 "8x400g-ndr-ib, or a results file measured across nodes",
                                 w.cluster.nodes));
  } else {
    f.inter.label = "none (one node)";
  }
  return f;
}

StepCost predict_step(const Workload& w, const Fabric& fabric, const Presets& presets, double exposed_target) {
  StepCost s = assemble(w, fabric, presets);
  find_target(s, w, fabric, presets, exposed_target);
  s.assumptions.push_back(fmt::format("target: exposed communication at most {:.3g}% of the step", 100 * exposed_target));
  return s;
}

std::vector<ScalePoint> predict_scaling(const Workload& w, const Fabric& fabric, const Presets& presets,
                                        const std::vector<int>& node_counts, double exposed_target) {
  std::vector<ScalePoint> out;
  for (const int nodes : node_counts) {
    Workload wn = w;
    wn.cluster.nodes = nodes;
    wn.dp = 0;
    ScalePoint point;
    point.nodes = nodes;
    try {
      point.step = predict_step(wn, fabric, presets, exposed_target);
    } catch (const UsageError& e) {
      point.why = e.what();
    }
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace fb::model
