// Workload YAML: strict keys, units, and the checks that the parallel degrees
// fit the cluster and the batch.
#include "fabricbench/model/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/types.hpp"
#include "fabricbench/model/fit.hpp"
#include "fabricbench/model/units.hpp"
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

std::string training_dtype_name(Dtype d) {
  if (d == Dtype::half) return "fp16";
  if (d == Dtype::float32) return "fp32";
  if (d == Dtype::fp8_e4m3) return "fp8_e4m3";
  if (d == Dtype::fp8_e5m2) return "fp8_e5m2";
  return "bf16";  // dtype_size() let only these and bfloat16 through
}

// A required section, in document order, so the first problem is reported first.
YAML::Node section(const Fields& top, const char* key) {
  if (!top.has(key)) throw UsageError(fmt::format("workload: {}: missing (required section)", key));
  return top.node(key);
}

// A transformer by its shape, or any model by its forward FLOPs per sample.
void read_model(const Fields& top, Workload& w) {
  const Fields f(section(top, "model"), "workload: model",
                 {"params", "layers", "hidden", "heads", "seq_len", "vocab", "rotary", "forward_flops_per_sample",
                  "activation_bytes_per_sample"});
  w.params = f.count("params");
  if (f.has("forward_flops_per_sample")) {
    for (const char* key : {"hidden", "heads", "seq_len", "vocab", "rotary"})
      if (f.has(key))
        throw UsageError(fmt::format("{}: a model given by forward_flops_per_sample has no transformer shape; drop it "
                                     "or give layers, hidden, heads and seq_len instead",
                                     f.name(key)));
    w.forward_flops_per_sample = f.count("forward_flops_per_sample");
    w.layers = f.integer_or("layers", 1);
    w.seq_len = 1;
    w.heads = w.hidden = 1;
    if (f.has("activation_bytes_per_sample")) w.activation_bytes_per_sample = f.count("activation_bytes_per_sample");
    return;
  }
  if (f.has("activation_bytes_per_sample"))
    throw UsageError(fmt::format("{}: only for a model given by forward_flops_per_sample (a transformer's activations "
                                 "follow from its shape)",
                                 f.name("activation_bytes_per_sample")));
  w.layers = f.integer("layers");
  w.hidden = f.integer("hidden");
  w.heads = f.integer_or("heads", std::max(1, w.hidden / 128));
  w.seq_len = f.integer("seq_len");
  if (f.has("vocab")) w.vocab = f.integer("vocab");
  w.rotary = f.boolean_or("rotary", false);
  if (w.hidden % w.heads != 0)
    throw UsageError(fmt::format("workload: model: hidden {} is not a multiple of heads {}", w.hidden, w.heads));
}

Recompute recompute_of(const Fields& f) {
  const std::string v = f.optional_text("recompute").value_or("false");
  if (v == "false" || v == "no" || v == "none" || v == "off") return Recompute::none;
  if (v == "true" || v == "yes" || v == "full" || v == "on") return Recompute::full;
  if (v == "selective") return Recompute::selective;
  throw UsageError(fmt::format("{} '{}': expected true or false (full recompute), or selective", f.name("recompute"),
                               v));
}

void read_training(const Fields& top, Workload& w) {
  const Fields f(section(top, "training"), "workload: training",
                 {"global_batch", "micro_batch", "dtype", "grad_dtype", "main_grad", "recompute", "flash_attention",
                  "dropout", "tokens"});
  w.global_batch = f.integer("global_batch");
  w.micro_batch = f.integer("micro_batch");
  w.param_bytes = w.act_bytes = dtype_size(f, "dtype", 2.0);
  // Kept in the workloads' own spelling whatever alias was written
  // ("bfloat16", "half"), so the peak chosen and the GEMM lines read agree.
  w.dtype = training_dtype_name(*parse_dtype(f.optional_text("dtype").value_or("bf16")));
  // Megatron-LM keeps an fp32 main_grad per parameter and reduces it in fp32
  // (--accumulate-allreduce-grads-in-fp32) unless told to reduce in bf16.
  const double main_grad = dtype_size(f, "main_grad", 0.0);
  if (f.has("main_grad") && main_grad != 4.0)
    throw UsageError(fmt::format("{} '{}': fp32 (Megatron's main_grad buffer) or leave it out", f.name("main_grad"),
                                 f.text("main_grad")));
  w.grad_memory_bytes = main_grad > 0 ? main_grad : w.param_bytes;
  w.grad_bytes = dtype_size(f, "grad_dtype", main_grad > 0 ? main_grad : w.param_bytes);
  w.recompute = recompute_of(f);
  w.flash_attention = f.boolean_or("flash_attention", true);
  w.dropout = f.fraction_or("dropout", 0);
  if (w.dropout >= 1) throw UsageError(fmt::format("{}: a probability below 1 (0 = none)", f.name("dropout")));
  if (f.has("tokens")) w.tokens = f.count("tokens");
}

void read_parallel(const Fields& top, Workload& w) {
  if (!top.has("parallel")) return;
  const Fields f(top.node("parallel"), "workload: parallel",
                 {"tp", "pp", "dp", "virtual_stages", "zero", "bucket", "sequence_parallel", "pp_scatter_gather"});
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
  w.sequence_parallel = f.boolean_or("sequence_parallel", false);
  w.pp_scatter_gather = f.boolean_or("pp_scatter_gather", true);
  if (!w.transformer() && (w.tp > 1 || w.pp > 1 || w.sequence_parallel))
    throw UsageError("workload: parallel: tensor, sequence and pipeline parallelism need a transformer's shape "
                     "(model: layers, hidden, heads, seq_len); a model given by forward_flops_per_sample runs data "
                     "parallel");
}

// DeepSpeed's ZeRO-3 knobs under their own names (counts of parameters).
void read_zero3(const Fields& top, Workload& w) {
  if (!top.has("zero3")) return;
  if (w.zero != 3) throw UsageError("workload: zero3: only with parallel: zero: 3");
  const Fields f(top.node("zero3"), "workload: zero3",
                 {"stage3_prefetch_bucket_size", "reduce_bucket_size", "stage3_max_live_parameters",
                  "stage3_max_reuse_distance", "fetch_modules_per_layer"});
  const auto count_or = [&](const char* key, double fallback) {
    if (!f.has(key)) return fallback;
    const double v = parse_count(f.text(key), f.name(key));
    if (v > detail::kMaxNumber) throw UsageError(fmt::format("{}: too large (at most 1e15)", f.name(key)));
    return v;
  };
  w.zero3.prefetch_bucket = count_or("stage3_prefetch_bucket_size", w.zero3.prefetch_bucket);
  w.zero3.reduce_bucket = count_or("reduce_bucket_size", w.zero3.reduce_bucket);
  w.zero3.max_live = count_or("stage3_max_live_parameters", w.zero3.max_live);
  w.zero3.max_reuse_distance = count_or("stage3_max_reuse_distance", w.zero3.max_reuse_distance);
  w.zero3.modules_per_layer = f.integer_or("fetch_modules_per_layer", w.zero3.modules_per_layer);
}

// The GEMMs of a `fabricbench gemm --out` record in this dtype (by value:
// "bf16" and the record's "bfloat16" are one type): each shape at the slowest
// rank's rate, since synchronous training waits for it, and the (cube root
// of m n k, TFLOP/s) curve of them all.
void curve_from_record(const std::string& path, const std::string& dtype, GemmCurve& curve) {
  const Results r = load_results(path);
  const auto wanted = parse_dtype(dtype);
  std::map<std::array<long long, 3>, double> slowest;
  for (const GemmLine& line : r.gemms) {
    if (parse_dtype(line.dtype) != wanted) continue;
    if (line.m <= 0 || line.n <= 0 || line.k <= 0 || !(line.tflops > 0)) continue;
    const std::array<long long, 3> mnk{line.m, line.n, line.k};
    if (curve.measured_gpu.empty()) curve.measured_gpu = line.gpu;
    const auto it = slowest.find(mnk);
    slowest[mnk] = it == slowest.end() ? line.tflops : std::min(it->second, line.tflops);
  }
  if (slowest.empty())
    throw UsageError(
        fmt::format("workload: compute: gemm_curve '{}': no {} \"gemm\" lines; record one with "
                    "`fabricbench gemm --dtype {} --shapes-of WORKLOAD --out FILE` (or --size N at "
                    "several sizes)",
                    path, dtype, dtype));
  std::map<double, double> by_size;
  for (const auto& [mnk, tflops] : slowest) {
    curve.shapes.push_back({mnk[0], mnk[1], mnk[2], tflops});
    const double size =
        std::cbrt(static_cast<double>(mnk[0]) * static_cast<double>(mnk[1]) * static_cast<double>(mnk[2]));
    const auto it = by_size.find(size);
    by_size[size] = it == by_size.end() ? tflops : std::min(it->second, tflops);
  }
  curve.points.assign(by_size.begin(), by_size.end());
}

std::vector<std::pair<double, double>> stated_curve(const Fields& f) {
  std::vector<std::pair<double, double>> out;
  for (const YAML::Node& item : detail::list(f, "gemm_curve")) {
    if (!item.IsSequence() || item.size() != 2 || !item[0].IsScalar() || !item[1].IsScalar())
      throw UsageError(fmt::format("{}: each point is [size, tflops], e.g. [4096, 250]", f.name("gemm_curve")));
    const double size = parse_number(item[0].Scalar(), f.name("gemm_curve"));
    const double tflops = parse_number(item[1].Scalar(), f.name("gemm_curve"));
    if (size < 1 || tflops <= 0 || size > detail::kMaxNumber || tflops > detail::kMaxNumber)
      throw UsageError(fmt::format("{}: sizes and TFLOP/s must be positive and at most 1e15", f.name("gemm_curve")));
    out.emplace_back(size, tflops);
  }
  std::sort(out.begin(), out.end());
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i].first == out[i - 1].first)
      throw UsageError(fmt::format("{}: size {} is given twice", f.name("gemm_curve"), out[i].first));
  if (out.empty()) throw UsageError(fmt::format("{}: the list is empty", f.name("gemm_curve")));
  return out;
}

void read_compute(const Fields& top, Workload& w, const std::string& base_dir) {
  const Fields f(section(top, "compute"), "workload: compute", {"tflops", "mfu", "gemm_curve", "of_gemm", "gemm_size"});
  const int given = f.has("tflops") + f.has("mfu") + f.has("gemm_curve");
  if (given != 1)
    throw UsageError(
        "workload: compute: give exactly one of tflops (achieved TFLOP/s per GPU), mfu (0.4 or 40%) or "
        "gemm_curve (a record, a list of [size, tflops] or preset; with of_gemm)");
  if (f.has("tflops")) {
    w.tflops = f.number("tflops");
    if (w.tflops <= 0) throw UsageError("workload: compute: tflops must be positive");
  } else if (f.has("mfu")) {
    w.mfu = f.fraction_or("mfu", 0);
    if (w.mfu <= 0) throw UsageError("workload: compute: mfu must be above 0");
  } else {
    const YAML::Node curve = f.node("gemm_curve");
    // `preset`: the priced GPU's published curve (profiles/presets/gpus.yaml),
    // looked up when the step is priced, since quotes price other GPUs.
    if (curve.IsScalar() && curve.Scalar() == "preset") {
      w.gemm.source = "preset";
    } else if (curve.IsScalar()) {
      std::string path = curve.Scalar();
      if (!base_dir.empty() && std::filesystem::path(path).is_relative()) path = base_dir + "/" + path;
      curve_from_record(path, w.dtype, w.gemm);
      w.gemm.source = path;
    } else {
      w.gemm.points = stated_curve(f);
      w.gemm.source = "stated";
    }
    if (!f.has("of_gemm"))
      throw UsageError(
          "workload: compute: of_gemm: missing: the share of the GEMM rate the step's products reach (a "
          "transformer's norms, activations and optimizer are priced beside them), e.g. 0.7 (calibrate it once with "
          "`fabricbench step --calibrated-workload`)");
    w.gemm.of_gemm = f.fraction_or("of_gemm", 0);
    if (w.gemm.of_gemm <= 0) throw UsageError("workload: compute: of_gemm must be above 0");
    if (f.has("gemm_size")) w.gemm.size = f.number("gemm_size");
    if (!w.transformer() && w.gemm.size <= 0)
      throw UsageError("workload: compute: gemm_size: missing: a model given by forward_flops_per_sample has no "
                       "shape to size its matrix products by");
  }
  if (!f.has("gemm_curve") && (f.has("of_gemm") || f.has("gemm_size")))
    throw UsageError("workload: compute: of_gemm and gemm_size go with gemm_curve");
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

double& BusbwShare::of(std::string_view group) {
  if (group == "tp") return tp;
  if (group == "dp") return dp;
  if (group == "pp") return pp;
  throw UsageError(fmt::format("busbw share of '{}': the groups are tp, dp and pp", group));
}

namespace {

// busbw_share: {dp: 0.08}: what the framework's collectives reach of
// NCCL's bus bandwidth, above 0 (the bandwidth term is divided by it).
void read_busbw_share(const Fields& top, Workload& w) {
  if (!top.has("busbw_share")) return;
  const Fields f(top.node("busbw_share"), "workload: busbw_share", {"tp", "dp", "pp"});
  for (const char* key : {"tp", "dp", "pp"}) {
    double& share = w.busbw_share.of(key);
    share = f.fraction_or(key, 1);
    if (share <= 0)
      throw UsageError(fmt::format("{}: above 0 (the share of NCCL's bus bandwidth the framework reaches; 1 = all "
                                   "of it)",
                                   f.name(key)));
  }
}

// data: {bytes_per_sample: 600K} (an image, a packed record) or
// {bytes_per_token: 2} (a token file: seq_len tokens per sample).
void read_data(const Fields& top, Workload& w) {
  if (!top.has("data")) return;
  const Fields f(top.node("data"), "workload: data", {"bytes_per_sample", "bytes_per_token", "pattern"});
  if (f.has("bytes_per_sample") == f.has("bytes_per_token"))
    throw UsageError("workload: data: give bytes_per_sample (e.g. 600K per image) or bytes_per_token (e.g. 2 for "
                     "uint16 token ids), one of them");
  if (f.has("bytes_per_sample")) {
    w.data.bytes_per_sample = static_cast<double>(f.bytes_or("bytes_per_sample", 0));
    if (w.data.bytes_per_sample <= 0) throw UsageError(f.name("bytes_per_sample") + ": above 0 bytes");
  } else {
    if (!w.transformer())
      throw UsageError(f.name("bytes_per_token") + ": a model without a sequence has no tokens; give bytes_per_sample");
    const double per_token = f.number("bytes_per_token");
    if (per_token <= 0) throw UsageError(f.name("bytes_per_token") + ": above 0");
    w.data.bytes_per_sample = per_token * w.seq_len;
  }
  w.data.pattern = f.optional_text("pattern").value_or("seq_read");
  if (w.data.pattern != "seq_read" && w.data.pattern != "small_read")
    throw UsageError(fmt::format("{} '{}': seq_read (large shards read in blocks) or small_read (a file per sample)",
                                 f.name("pattern"), w.data.pattern));
}

}  // namespace

Workload parse_workload(std::string_view yaml_text, const std::string& base_dir) {
  const YAML::Node doc = detail::load_yaml(yaml_text, "workload");
  const Fields top(doc, "workload",
                   {"name", "model", "training", "parallel", "zero3", "compute", "cluster", "overlap", "busbw_share",
                    "data"});
  Workload w;
  w.name = top.optional_text("name").value_or("workload");
  read_model(top, w);
  read_training(top, w);
  read_parallel(top, w);
  read_zero3(top, w);
  read_compute(top, w, base_dir);
  read_cluster(top, w);
  read_overlap(top, w);
  read_busbw_share(top, w);
  read_data(top, w);
  resolve_parallel(w);  // reject degrees that cannot run, now, with the file's names
  return w;
}

Workload load_workload(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return detail::parse_file(path, "workload file", [&](const std::string& text) { return parse_workload(text, dir); });
}

Parallel resolve_parallel(const Workload& w) {
  using i64 = std::int64_t;  // products of degrees in 64 bits: inputs are untrusted
  if (w.cluster.nodes < 1 || w.cluster.gpus_per_node < 1 || w.cluster.nodes > 100000 || w.cluster.gpus_per_node > 1024)
    throw UsageError(fmt::format("cluster: {} nodes x {} GPUs: 1 to 100000 nodes of 1 to 1024 GPUs", w.cluster.nodes,
                                 w.cluster.gpus_per_node));
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
  // Layers need not divide pp x v (Megatron splits them unevenly, 126
  // layers on 16 stages); each model chunk needs one.
  if (w.layers < pp * w.virtual_stages)
    throw UsageError(fmt::format("parallel: pp {} x virtual_stages {} = {} model chunks for {} layers; each chunk needs "
                                 "a layer",
                                 pp, w.virtual_stages, pp * w.virtual_stages, w.layers));
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
  p.stage_layers = max_stage_layers(w.layers, w.pp, w.virtual_stages);
  return p;
}

double params_per_gpu(const Workload& w, const Parallel& p) {
  return w.params * (static_cast<double>(p.stage_layers) / w.layers) / p.tp;
}

}  // namespace fb::model
