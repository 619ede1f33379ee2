// Workload YAML: strict keys, units, and the checks that the parallel degrees
// fit the cluster and the batch.
#include "fabricbench/model/workload.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/types.hpp"
#include "yaml_fields.hpp"

namespace fb::model {
namespace {

using detail::Fields;

double dtype_size(const Fields& f, std::string_view key, double fallback) {
  const auto text = f.optional_text(key);
  if (!text) return fallback;
  const auto d = parse_dtype(*text);
  if (!d || (*d != Dtype::bfloat16 && *d != Dtype::half && *d != Dtype::float32 && *d != Dtype::fp8_e4m3 &&
             *d != Dtype::fp8_e5m2))
    throw UsageError(fmt::format("{} '{}': allowed: bf16, fp16, fp32, fp8_e4m3, fp8_e5m2", f.name(key), *text));
  return static_cast<double>(dtype_bytes(*d));
}

// A required section, in document order, so the first problem is reported first.
YAML::Node section(const Fields& top, const char* key) {
  if (!top.has(key)) throw UsageError(fmt::format("workload: {}: missing (required section)", key));
  return top.node(key);
}

void read_model(const Fields& top, Workload& w) {
  const Fields f(section(top, "model"), "workload: model", {"params", "layers", "hidden", "heads", "seq_len"});
  w.params = f.count("params");
  w.layers = f.integer("layers");
  w.hidden = f.integer("hidden");
  w.heads = f.integer_or("heads", std::max(1, w.hidden / 128));
  w.seq_len = f.integer("seq_len");
  if (w.hidden % w.heads != 0)
    throw UsageError(fmt::format("workload: model: hidden {} is not a multiple of heads {}", w.hidden, w.heads));
}

void read_training(const Fields& top, Workload& w) {
  const Fields f(section(top, "training"), "workload: training",
                 {"global_batch", "micro_batch", "dtype", "grad_dtype", "recompute", "flash_attention", "tokens"});
  w.global_batch = f.integer("global_batch");
  w.micro_batch = f.integer("micro_batch");
  w.param_bytes = w.act_bytes = dtype_size(f, "dtype", 2.0);
  w.dtype = f.optional_text("dtype").value_or("bf16");
  w.grad_bytes = dtype_size(f, "grad_dtype", w.param_bytes);
  w.recompute = f.boolean_or("recompute", false);
  w.flash_attention = f.boolean_or("flash_attention", true);
  if (f.has("tokens")) w.tokens = f.count("tokens");
}

void read_parallel(const Fields& top, Workload& w) {
  if (!top.has("parallel")) return;
  const Fields f(top.node("parallel"), "workload: parallel", {"tp", "pp", "dp", "virtual_stages", "zero", "bucket"});
  w.tp = f.integer_or("tp", 1);
  w.pp = f.integer_or("pp", 1);
  w.dp = f.integer_or("dp", 0);
  w.virtual_stages = f.integer_or("virtual_stages", 1);
  if (f.has("zero")) {
    const double z = f.number("zero");
    if (z != 0 && z != 1 && z != 2 && z != 3)
      throw UsageError(fmt::format("{} '{}': ZeRO stage is 0, 1, 2 or 3", f.name("zero"), f.text("zero")));
    w.zero = static_cast<int>(z);
  }
  w.bucket_bytes = f.bytes_or("bucket", w.bucket_bytes);
}

void read_compute(const Fields& top, Workload& w) {
  const Fields f(section(top, "compute"), "workload: compute", {"tflops", "mfu"});
  if (f.has("tflops") == f.has("mfu"))
    throw UsageError("workload: compute: give exactly one of tflops (achieved TFLOP/s per GPU) or mfu (0.4 or 40%)");
  if (f.has("tflops")) {
    w.tflops = f.number("tflops");
    if (w.tflops <= 0) throw UsageError("workload: compute: tflops must be positive");
  } else {
    w.mfu = f.fraction_or("mfu", 0);
    if (w.mfu <= 0) throw UsageError("workload: compute: mfu must be above 0");
  }
}

void read_cluster(const Fields& top, Workload& w) {
  const Fields f(section(top, "cluster"), "workload: cluster", {"gpu", "nodes", "gpus_per_node", "node", "network"});
  w.cluster.gpu = w.compute_gpu = f.text("gpu");
  w.cluster.nodes = f.integer("nodes");
  w.cluster.gpus_per_node = f.integer("gpus_per_node");
  w.cluster.node = f.optional_text("node").value_or("");
  w.cluster.network = f.optional_text("network").value_or("");
}

void read_overlap(const Fields& top, Workload& w) {
  if (!top.has("overlap")) return;
  const Fields f(top.node("overlap"), "workload: overlap", {"grad_reduce", "param_gather", "tp", "pp"});
  w.overlap.grad_reduce = f.fraction_or("grad_reduce", 0);
  w.overlap.param_gather = f.fraction_or("param_gather", 0);
  w.overlap.tp = f.fraction_or("tp", 0);
  w.overlap.pp = f.fraction_or("pp", 0);
}

}  // namespace

Workload parse_workload(std::string_view yaml_text) {
  const YAML::Node doc = detail::load_yaml(yaml_text, "workload");
  const Fields top(doc, "workload", {"name", "model", "training", "parallel", "compute", "cluster", "overlap"});
  Workload w;
  w.name = top.optional_text("name").value_or("workload");
  read_model(top, w);
  read_training(top, w);
  read_parallel(top, w);
  read_compute(top, w);
  read_cluster(top, w);
  read_overlap(top, w);
  resolve_parallel(w);  // reject degrees that cannot run, now, with the file's names
  return w;
}

Workload load_workload(const std::string& path) {
  return detail::parse_file(path, "workload file", parse_workload);
}

Parallel resolve_parallel(const Workload& w) {
  using i64 = std::int64_t;  // products of degrees in 64 bits: inputs are untrusted
  if (w.cluster.nodes > 100000 || w.cluster.gpus_per_node > 1024)
    throw UsageError(fmt::format("cluster: {} nodes x {} GPUs: at most 100000 nodes of at most 1024 GPUs",
                                 w.cluster.nodes, w.cluster.gpus_per_node));
  const i64 g = w.cluster.gpus_per_node, gpus = static_cast<i64>(w.cluster.nodes) * g;
  const i64 tp = w.tp, pp = w.pp, tp_pp = tp * pp;
  if (gpus % tp_pp != 0)
    throw UsageError(fmt::format("parallel: tp {} x pp {} = {} does not divide the {} GPUs ({} nodes x {}); choose "
                                 "degrees whose product divides the GPU count",
                                 tp, pp, tp_pp, gpus, w.cluster.nodes, g));
  const i64 dp = gpus / tp_pp;
  if (w.dp != 0 && w.dp != dp)
    throw UsageError(fmt::format("parallel: dp {} x tp {} x pp {} = {} GPUs, but the cluster has {} ({} nodes x {}); "
                                 "drop dp to use dp = {}",
                                 w.dp, tp, pp, w.dp * tp_pp, gpus, w.cluster.nodes, g, dp));
  if (g % tp != 0 && tp % g != 0)
    throw UsageError(fmt::format("parallel: tp {} neither divides nor is a multiple of the {} GPUs per node", tp, g));
  const i64 stage = tp * dp;  // GPUs of one pipeline stage (Megatron's order: tp, dp, pp)
  if (stage % g != 0 && g % stage != 0)
    throw UsageError(fmt::format("parallel: a pipeline stage of tp x dp = {} GPUs neither fills whole nodes of {} "
                                 "GPUs nor divides one; choose pp so that tp x dp and {} divide one another",
                                 stage, g, g));
  if (w.heads % tp != 0)
    throw UsageError(fmt::format("parallel: tp {} does not divide the {} attention heads", tp, w.heads));
  if (w.layers % (pp * w.virtual_stages) != 0)
    throw UsageError(fmt::format("parallel: pp {} x virtual_stages {} does not divide the {} layers", pp,
                                 w.virtual_stages, w.layers));
  const i64 replica_batch = dp * w.micro_batch;
  if (w.global_batch % replica_batch != 0)
    throw UsageError(fmt::format("training: global_batch {} is not a multiple of dp {} x micro_batch {} = {}; choose a "
                                 "batch or micro-batch that divides",
                                 w.global_batch, dp, w.micro_batch, replica_batch));
  Parallel p;
  p.gpus = static_cast<int>(gpus);
  p.nodes = w.cluster.nodes;
  p.gpus_per_node = static_cast<int>(g);
  p.dp = static_cast<int>(dp);
  p.tp = w.tp;
  p.pp = w.pp;
  p.virtual_stages = w.virtual_stages;
  p.micro_batches = static_cast<int>(w.global_batch / replica_batch);
  return p;
}

}  // namespace fb::model
