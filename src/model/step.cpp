// A step assembled from the formulas (formulas.cpp) and the links of a fabric.
#include "fabricbench/model/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/formulas.hpp"

namespace fb::model {
namespace {

struct Context {
  const Workload& w;
  const Parallel& p;
  const Fabric& fabric;
  double compute_us;
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

// Prices one call of `op` on `bytes` over the group, phase by phase, and
// fills the per-call parts of the item.
void price(const Context& c, CommItem& item, const GroupShape& shape, double calls) {
  double per_call = 0, fixed = 0, wire = 0;
  bool intra = false, inter = false;
  item.intra_basis = item.inter_basis = Basis::measured;
  for (const Phase& ph : hierarchical_phases(item.op, item.bytes_per_call, shape)) {
    const Link& link = ph.level == Level::intra ? c.fabric.intra : c.fabric.inter;
    const Timed t = link_time(link, ph.op, ph.nranks, ph.bytes);
    per_call += t.time_us;
    Basis& basis = ph.level == Level::intra ? item.intra_basis : item.inter_basis;
    basis = std::max(basis, t.basis);
    if (ph.level == Level::intra) {
      intra = true;
      fixed += t.time_us;
    } else {
      inter = true;
      fixed += ring_steps(ph.op, ph.nranks) * link.alpha_us;
      wire += ring_wire_bytes(ph.op, ph.nranks, ph.bytes);
    }
  }
  item.where = intra && inter ? "intra+inter" : inter ? "inter" : "intra";
  item.calls = calls;
  item.time_per_call_us = per_call;
  item.total_us = per_call * calls;
  item.fixed_us = fixed * calls;
  item.inter_wire_bytes = wire * calls;
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

void add_tp(const Context& c, std::vector<CommItem>& items) {
  if (c.p.tp <= 1) return;
  CommItem item = make_item("TP all-reduce", "tp", Op::all_reduce, c.p.tp);
  item.bytes_per_call = tp_allreduce_bytes(c.w.micro_batch, c.w.seq_len, c.w.hidden, c.w.act_bytes);
  const double calls = static_cast<double>(c.p.micro_batches) * (c.w.layers / c.p.pp) * tp_allreduces_per_layer(c.w.recompute);
  price(c, item, shape_of(c.p.tp, 1, c.p.gpus_per_node), calls);
  expose(item, c.w.overlap.tp * c.compute_us);
  items.push_back(item);
}

void add_dp(const Context& c, std::vector<CommItem>& items) {
  if (c.p.dp <= 1) return;
  const double params_per_gpu = c.w.params / (c.p.tp * c.p.pp);
  const int layers_per_stage = c.w.layers / c.p.pp;
  const int m = c.p.micro_batches;
  for (const DpCollective& d : dp_collectives(c.w.zero)) {
    const std::string prefix = c.w.zero == 0 ? "DP " : "ZeRO-" + std::to_string(c.w.zero) + " ";
    CommItem item = make_item(prefix + d.name, "dp", d.op, c.p.dp);
    const double bytes = params_per_gpu * (d.gradients ? c.w.grad_bytes : c.w.param_bytes);
    // ZeRO-3 gathers parameters layer by layer, at least one call per layer.
    const double per_pass = bucket_calls(bytes, static_cast<double>(c.w.bucket_bytes),
                                         c.w.zero == 3 && !d.gradients ? layers_per_stage : 1);
    const double passes = d.per_micro_batch > 0 ? static_cast<double>(m) * d.per_micro_batch : 1.0;
    item.bytes_per_call = bytes / per_pass;
    price(c, item, shape_of(c.p.dp, c.p.tp, c.p.gpus_per_node), per_pass * passes);
    // Once per step it can hide only under one micro-batch's pass.
    const double pass_us = d.window == Pass::backward ? c.backward_us : c.forward_us;
    const double window = (d.per_micro_batch > 0 ? pass_us : pass_us / m) *
                          (d.gradients ? c.w.overlap.grad_reduce : c.w.overlap.param_gather);
    // The first layer's gather of each pass has nothing before it to hide under.
    double floor = c.w.zero == 3 && !d.gradients ? item.time_per_call_us * passes : 0.0;
    double hiding = window;
    if (d.gradients && window > 0) {
      // Gradient buckets become ready evenly through the backward pass, the
      // last one as it ends (as DDP issues them): that one has nothing left
      // to hide under, and the others share only the window before it. With
      // n calls of d us in a window W, one stream drains max(d, n d - W (n-1)/n)
      // after the compute (`fabricbench step` runs exactly this).
      const double calls = per_pass * passes;
      floor = item.time_per_call_us;
      hiding = window * (calls - 1) / calls;
    }
    expose(item, window, floor, hiding);
    items.push_back(item);
  }
}

void add_pp(const Context& c, std::vector<CommItem>& items) {
  if (c.p.pp <= 1) return;
  CommItem item = make_item("PP send/recv", "pp", Op::sendrecv, 2);
  const int g = c.p.gpus_per_node, stage = c.p.tp * c.p.dp;
  const double bytes = tp_allreduce_bytes(c.w.micro_batch, c.w.seq_len, c.w.hidden, c.w.act_bytes);
  // Stage boundaries cross nodes once the pipeline spans more than one node;
  // then every GPU of the stage on that node sends at once.
  const bool crosses = static_cast<long long>(stage) * c.p.pp > g;
  const GroupShape shape = crosses ? GroupShape{1, 2, std::min(g, stage)} : GroupShape{2, 1, 1};
  item.bytes_per_call = bytes;
  price(c, item, shape, pp_messages_per_step(c.p.micro_batches, c.p.virtual_stages));
  expose(item, c.w.overlap.pp * c.compute_us);
  items.push_back(item);
}

double compute_rate_tflops(const Workload& w, const GpuPreset& gpu, const Presets& presets) {
  const auto peak = [&](const GpuPreset& g) { return w.dtype == "fp16" ? g.fp16_tflops : g.bf16_tflops; };
  if (w.mfu > 0) return w.mfu * peak(gpu) * recompute_factor(w.recompute);
  const GpuPreset& measured_on = presets.gpu(w.compute_gpu, "workload: cluster: gpu");
  return w.tflops * peak(gpu) / peak(measured_on);
}

}  // namespace

Fabric fabric_for(const Workload& w, std::string_view network, const Presets& presets, const std::string& base_dir) {
  Fabric f;
  const std::string& node = w.cluster.node.empty() ? presets.gpu(w.cluster.gpu, "cluster: gpu").node : w.cluster.node;
  f.intra = resolve_node(node, presets, base_dir);
  if (!network.empty()) {
    f.inter = resolve_network(network, presets, base_dir);
  } else if (w.cluster.nodes > 1) {
    throw UsageError(fmt::format("{} nodes need a network: a preset such as 1x10gbe or 8x400g-ndr-ib, or a results "
                                 "file measured across nodes",
                                 w.cluster.nodes));
  } else {
    f.inter.label = "none (one node)";
  }
  return f;
}

StepCost predict_step(const Workload& w, const Fabric& fabric, const Presets& presets) {
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
  s.model_flops = s.tokens * model_flops_per_token(w.params, w.layers, w.hidden, w.seq_len);
  const double rate = compute_rate_tflops(w, gpu, presets);
  s.compute_us = s.model_flops * recompute_factor(w.recompute) / (p.gpus * rate * 1e12) * 1e6;
  s.bubble_us = s.compute_us * bubble_fraction(p.pp, p.virtual_stages, p.micro_batches);
  const double bwd = backward_share(w.recompute);
  const Context c{w, p, fabric, s.compute_us, s.compute_us * bwd, s.compute_us * (1 - bwd)};
  add_tp(c, s.items);
  add_dp(c, s.items);
  add_pp(c, s.items);

  double fixed = 0;
  for (const auto& item : s.items) {
    s.comm_us += item.total_us;
    s.exposed_us += item.exposed_us;
    s.inter_wire_bytes += item.inter_wire_bytes;
    fixed += item.fixed_us;
  }
  // Windows of different collectives can name the same compute: never hide
  // more communication than there is compute to hide it under.
  s.exposed_us = std::max(s.exposed_us, s.comm_us - s.compute_us);
  s.step_us = s.compute_us + s.bubble_us + s.exposed_us;
  s.comm_share = s.comm_us / (s.compute_us + s.bubble_us + s.comm_us);
  s.exposed_share = s.exposed_us / s.step_us;
  s.efficiency = s.compute_us / s.step_us;
  const double peak = w.dtype == "fp16" ? gpu.fp16_tflops : gpu.bf16_tflops;
  s.mfu = s.model_flops / (s.step_us * 1e-6 * p.gpus * peak * 1e12);
  const MemoryFit memory = memory_fit(w, gpu).at(static_cast<std::size_t>(w.zero));
  s.memory_bytes = memory.total_bytes;
  s.memory_capacity_bytes = memory.capacity_bytes;
  if (s.inter_wire_bytes > 0) {
    const double room_us = s.compute_us - fixed;
    s.hide_gbps = room_us > 0 ? s.inter_wire_bytes / room_us / 1e3 : std::numeric_limits<double>::infinity();
  }
  return s;
}

std::vector<ScalePoint> predict_scaling(const Workload& w, const Fabric& fabric, const Presets& presets,
                                        const std::vector<int>& node_counts) {
  std::vector<ScalePoint> out;
  for (const int nodes : node_counts) {
    Workload wn = w;
    wn.cluster.nodes = nodes;
    wn.dp = 0;
    ScalePoint point;
    point.nodes = nodes;
    try {
      point.step = predict_step(wn, fabric, presets);
    } catch (const UsageError& e) {
      point.why = e.what();
    }
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace fb::model
