// Workload YAML: a full file parses; bad input (unknown keys, missing fields,
// ambiguous units, degrees that do not divide) is a UsageError naming the key.
#include "fabricbench/model/workload.hpp"

#include <gtest/gtest.h>

#include <random>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/quotes.hpp"
#include "model_rows.hpp"

namespace fb::model {
namespace {

const char* kWorkload = R"(
name: test
model: {params: 7B, layers: 32, hidden: 4096, heads: 32, seq_len: 2048}
training: {global_batch: 512, micro_batch: 4, dtype: bf16, grad_dtype: fp32, recompute: true, tokens: 1T}
parallel: {tp: 2, pp: 2, zero: 1, bucket: 50M, virtual_stages: 2}
compute: {mfu: 45%}
cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 8, network: 8x400g-ndr-ib}
overlap: {grad_reduce: 0.8, param_gather: 50%}
)";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& yaml) {
  try {
    parse_workload(yaml);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Workload, ParsesEveryKey) {
  const Workload w = parse_workload(kWorkload);
  EXPECT_EQ(w.name, "test");
  EXPECT_DOUBLE_EQ(w.params, 7e9);
  EXPECT_EQ(w.layers, 32);
  EXPECT_EQ(w.seq_len, 2048);
  EXPECT_DOUBLE_EQ(w.grad_bytes, 4);
  EXPECT_DOUBLE_EQ(w.param_bytes, 2);
  EXPECT_EQ(w.recompute, Recompute::full);
  EXPECT_DOUBLE_EQ(w.tokens, 1e12);
  EXPECT_EQ(w.bucket_bytes, 50ull << 20);
  EXPECT_DOUBLE_EQ(w.mfu, 0.45);
  EXPECT_EQ(w.cluster.network, "8x400g-ndr-ib");
  EXPECT_DOUBLE_EQ(w.overlap.param_gather, 0.5);
  EXPECT_DOUBLE_EQ(w.busbw_share.dp, 1);  // NCCL's own unless stated
  const Workload shared = parse_workload(with(kWorkload, "overlap:", "busbw_share: {dp: 8%, pp: 0.5}\noverlap:"));
  EXPECT_DOUBLE_EQ(shared.busbw_share.dp, 0.08);
  EXPECT_DOUBLE_EQ(shared.busbw_share.pp, 0.5);
  EXPECT_DOUBLE_EQ(shared.busbw_share.tp, 1);
  const Parallel p = resolve_parallel(w);
  EXPECT_EQ(p.gpus, 32);
  EXPECT_EQ(p.dp, 8);
  EXPECT_EQ(p.micro_batches, 16);
  EXPECT_DOUBLE_EQ(w.tokens_per_step(), 512.0 * 2048);
}

TEST(Workload, BadInputNamesTheKeyAndTheFix) {
  struct Case {
    std::string yaml, expect;
  };
  const std::string w = kWorkload;
  const Case cases[] = {
      {with(w, "heads: 32", "heads: 32, experts: 8"), "workload: model: unknown key 'experts'"},
      {with(w, "overlap:", "overlapp:"), "unknown key 'overlapp'"},
      {with(w, "layers: 32, ", ""), "workload: model: layers: missing"},
      {with(w, "compute: {mfu: 45%}", "compute: {mfu: 45%, tflops: 400}"), "exactly one of tflops"},
      {with(w, "compute: {mfu: 45%}\n", ""), "workload: compute: missing"},
      {with(w, "params: 7B", "params: 7GB"), "workload: model: params '7GB'"},
      {with(w, "bucket: 50M", "bucket: 50MB"), "ambiguous"},
      {with(w, "tp: 2", "tp: 3"), "tp 3 x pp 2 = 6 does not divide the 32 GPUs"},
      {with(w, "tp: 2, pp: 2", "tp: 2, pp: 2, dp: 16"), "dp 16 x tp 2 x pp 2 = 64 GPUs, but the cluster has 32"},
      {with(w, "global_batch: 512", "global_batch: 500"), "global_batch 500 is not a multiple of dp 8"},
      {with(w, "zero: 1", "zero: 4"), "ZeRO stage is 0, 1, 2 or 3"},
      {with(w, "tp: 2", "tp: 2.5"), "positive whole number"},
      {with(w, "dtype: bf16", "dtype: int8"), "allowed: bf16"},
      {with(w, "grad_reduce: 0.8", "grad_reduce: 1.8"), "between 0 and 1"},
      {with(w, "recompute: true", "recompute: maybe"), "expected true or false"},
      {with(w, "virtual_stages: 2", "virtual_stages: 20"), "40 model chunks for 32 layers"},
      {with(w, "recompute: true", "recompute: partial"), "or selective"},
      {with(w, "grad_dtype: fp32", "grad_dtype: fp32, main_grad: bf16"), "main_grad 'bf16': fp32"},
      {with(w, "compute: {mfu: 45%}", "compute: {gemm_curve: [[4096, 250]]}"), "of_gemm: missing"},
      {with(w, "compute: {mfu: 45%}", "compute: {gemm_curve: [[4096, 250], [4096, 260]], of_gemm: 0.7}"),
       "size 4096 is given twice"},
      {with(w, "compute: {mfu: 45%}", "compute: {mfu: 45%, of_gemm: 0.7}"), "go with gemm_curve"},
      {with(w, "overlap:", "zero3: {reduce_bucket_size: 1e8}\noverlap:"), "zero3: only with parallel: zero: 3"},
      {with(w, "overlap:", "busbw_share: {dp: 0}\noverlap:"), "workload: busbw_share: dp: above 0"},
      {with(w, "overlap:", "busbw_share: {tp: 1.2}\noverlap:"), "workload: busbw_share: tp '1.2': must be between"},
      {with(w, "overlap:", "busbw_share: {ep: 0.5}\noverlap:"), "workload: busbw_share: unknown key 'ep'"},
      {with(w, "params: 7B, layers: 32, hidden: 4096, heads: 32, seq_len: 2048",
            "params: 25M, forward_flops_per_sample: 8G"),
       "need a transformer's shape"},
      {with(w, "params: 7B", "params: 1e308"), "workload: model: params '1e308': too large"},
      {with(w, "params: 7B", "params: 7B, params: 8B"), "workload: model: key 'params' is given twice"},
      {std::string(w) + "---\n" + w, "more than one YAML document"},
      {with(w, "heads: 32", "heads: 1"), "tp 2 does not divide the 1 attention heads"},
      {"{model: [1, 2], training: {}, compute: {}, cluster: {}}", "workload: model: expected a map of keys"},
      {"{model: {}, training: {}, compute: {}, cluster: {}, extra: 1}", "workload: unknown key 'extra'"},
      {"- just\n- a list", "expected a map"},
      {"model: {params: 7B", "not valid YAML"},
  };
  for (const auto& c : cases) EXPECT_NE(error_of(c.yaml).find(c.expect), std::string::npos) << error_of(c.yaml);
}

TEST(Workload, DeepSpeedZero3KnobsAndOtherWorkloads) {
  const Workload z = parse_workload(with(with(kWorkload, "zero: 1", "zero: 3"), "overlap:",
                                         "zero3: {stage3_prefetch_bucket_size: 2e8, reduce_bucket_size: 1e8, "
                                         "stage3_max_live_parameters: 3e9, stage3_max_reuse_distance: 0, "
                                         "fetch_modules_per_layer: 6}\noverlap:"));
  EXPECT_DOUBLE_EQ(z.zero3.prefetch_bucket, 2e8);
  EXPECT_DOUBLE_EQ(z.zero3.reduce_bucket, 1e8);
  EXPECT_DOUBLE_EQ(z.zero3.max_live, 3e9);
  EXPECT_DOUBLE_EQ(z.zero3.max_reuse_distance, 0);
  EXPECT_EQ(z.zero3.modules_per_layer, 6);
  // A CNN by its forward FLOPs per sample, data parallel, Horovod's 64 MiB fusion buffer.
  const Workload cnn = parse_workload(R"(
model: {params: 25.6M, forward_flops_per_sample: 8.2G, activation_bytes_per_sample: 100M}
training: {global_batch: 512, micro_batch: 32, dtype: fp16}
parallel: {bucket: 64M}
compute: {tflops: 100}
cluster: {gpu: a100-80gb, nodes: 2, gpus_per_node: 8}
)");
  EXPECT_FALSE(cnn.transformer());
  EXPECT_DOUBLE_EQ(cnn.forward_flops_per_sample, 8.2e9);
  EXPECT_DOUBLE_EQ(cnn.tokens_per_step(), 512);
  EXPECT_EQ(cnn.bucket_bytes, 64ull << 20);
  // Megatron's fp32 main_grad: kept and reduced in fp32 unless grad_dtype says otherwise.
  const Workload mg = parse_workload(with(kWorkload, "grad_dtype: fp32", "main_grad: fp32"));
  EXPECT_DOUBLE_EQ(mg.grad_memory_bytes, 4);
  EXPECT_DOUBLE_EQ(mg.grad_bytes, 4);
  const Workload bf16_wire = parse_workload(with(kWorkload, "grad_dtype: fp32", "main_grad: fp32, grad_dtype: bf16"));
  EXPECT_DOUBLE_EQ(bf16_wire.grad_memory_bytes, 4);
  EXPECT_DOUBLE_EQ(bf16_wire.grad_bytes, 2);
  const Workload sel = parse_workload(with(kWorkload, "recompute: true", "recompute: selective"));
  EXPECT_EQ(sel.recompute, Recompute::selective);
  // Layers need not divide pp x v.
  const Workload uneven = parse_workload(with(kWorkload, "layers: 32", "layers: 30"));
  EXPECT_EQ(resolve_parallel(uneven).stage_layers, 16);  // pp 2 x v 2: chunks of 8 or 7
}

TEST(Workload, LayoutChecksForTensorAndPipelineDegrees) {
  Workload w = parse_workload(kWorkload);
  w.cluster.gpus_per_node = 6;  // 24 GPUs
  w.cluster.nodes = 4;
  w.tp = 4;
  w.pp = 1;
  w.global_batch = 24;
  w.micro_batch = 1;
  EXPECT_THROW(resolve_parallel(w), UsageError);  // tp 4 vs 6 GPUs per node
  w.tp = 2;
  w.pp = 3;  // stage = tp 2 x dp 4 = 8: neither fills nor divides 6-GPU nodes
  try {
    resolve_parallel(w);
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline stage of tp x dp = 8"), std::string::npos) << e.what();
  }
}

// The parsers are what a fuzzer calls: any text gives a result or a
// UsageError, never a crash or another exception. Seeds: a full workload, a
// quotes file and the three preset files, each mutated at random.
TEST(Workload, ArbitraryTextOnlyEverRaisesUsageErrors) {
  const std::string presets = std::string(FB_SOURCE_DIR) + "/profiles/presets/";
  const std::string quotes = std::string(FB_SOURCE_DIR) + "/profiles/quotes/a100-10gbe-vs-hdr.yaml";
  using Parse = void (*)(const std::string&);
  const std::pair<std::string, Parse> seeds[] = {
      {kWorkload, [](const std::string& t) { parse_workload(t); }},
      {test::read_text(quotes), [](const std::string& t) { parse_quotes(t); }},
      {test::read_text(presets + "networks.yaml"), [](const std::string& t) { parse_network_presets(t); }},
      {test::read_text(presets + "nodes.yaml"), [](const std::string& t) { parse_node_presets(t); }},
      {test::read_text(presets + "gpus.yaml"), [](const std::string& t) { parse_gpu_presets(t); }},
  };
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]:,-#&*!|>'\"%@` \n\t0123456789abcdefxyzB.";
  for (const auto& [seed, parse] : seeds) {
    ASSERT_NO_THROW(parse(seed));
    for (int i = 0; i < 600; ++i) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % (text.size() + 1);
        switch (rng() % 3) {
          case 0: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
          case 1: if (at < text.size()) text.erase(at, 1); break;
          default: if (at < text.size()) text[at] = alphabet[rng() % alphabet.size()];
        }
      }
      try {
        parse(text);
      } catch (const UsageError&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not a UsageError: " << e.what() << "\n" << text;
      }
    }
  }
}

}  // namespace
}  // namespace fb::model
