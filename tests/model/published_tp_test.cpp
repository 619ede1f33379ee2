// Issue 38's validation clause from a second, independent source: the
// change in throughput between rows of published tables that run one model
// on the same GPUs at two tensor-parallel degrees (and, beside them, at
// several micro-batch sizes), predicted by the model's whole step with the
// GPU's preset GEMM curve and nothing fitted to these rows.
// compute_shapes_test.cpp holds the first source's tables (llm-foundry).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"

// A namespace of its own: the unity build puts every test file of the target
// in one translation unit, where published_test.cpp's kSeq and kVocab live.
namespace fb::model::published_tp {
namespace {

// bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles-prequel.md
// (commit 053adafee86d8b0beb10ddd95e5bbbbe3d702f3c): the BLOOM-176B team's
// layout benchmarks, February 2022, Megatron-DeepSpeed on Jean Zay. Every
// row: 48 nodes of 8 A100 80GB (384 GPUs; the README beside it:
// train/tr11-176B-ml/README.md, NVLink inside a node, 4 Omni-Path links
// between nodes), sequence length 2048, global batch 2048, activation
// checkpointing (full recompute: the README's Throughput section), ZeRO
// stage 1, vocabulary 250k (250880 padded, README). Rows before 02-28 ran
// fp16, rows from 02-28 the bf16 optimizer (the chronicle's "Rebalancing
// layers" section, which also gives those rows' pipeline partition: the two
// embeddings as a stage slot each). Each table's NHIDDEN, NLAYERS and NHEADS
// as its heading states them ("all NHEADS=64 (above too)" for the 02-21
// rows). The published figure is seconds per iteration at iteration 2;
// TFLOPs as printed is kept to check the transcription (same GPUs, same
// model: throughput is inversely proportional to both).
//
// A network preset stands in for Omni-Path (none in profiles/presets):
// 4 x 100 Gb/s RDMA NICs per node, the README's four links at OPA's
// 100 Gb/s. It moves only the DP and pipeline traffic between nodes
// (1x100gbe-roce or 4x200g-hdr-ib instead move no pair's error by more than
// 0.7 points).
//
// What is compared: tokens/s per GPU from the model's whole step
// (StepCost::step_us), nothing calibrated: the products of each row's
// per-TP shapes at the a100-80gb preset curve's rate (of_gemm 1), the
// non-GEMM work at the datasheet memory bandwidth, the pipeline bubble, the
// TP all-reduces over the GPU's NVLink node preset (nvlink3-8), the ZeRO-1
// gradient reduce-scatter and parameter all-gather and the pipeline sends,
// all exposed (no overlap stated), and the optimizer step.
constexpr int kNodes = 48, kGpusPerNode = 8, kSeq = 2048, kGlobalBatch = 2048;
constexpr double kVocab = 250880;
constexpr const char* kNetwork = "4x100gbe-roce";

struct Layout {
  int dp, tp, pp, micro;
  double sec_per_it;  // Sec/it as printed
  double tflops;      // TFLOPs as printed (a transcription check)
};

struct Sweep {
  const char* name;
  const char* dtype;
  int layers, hidden, heads;
  std::vector<Layout> rows;
  // Pairs (by the index of their first row) the model misses by more than
  // 10%, reported in docs/model.md with their likely causes; the test keeps
  // them honest both ways.
  std::vector<std::size_t> known_misses;
};

const std::vector<Sweep>& sweeps() {
  static const std::vector<Sweep> s = {
      // "48 node contenders" (02-21): micro-batch sweeps at two layouts.
      {"02-21 181B DP4 TP8 PP12, MBS",
       "fp16",
       72,
       14336,
       64,
       {{4, 8, 12, 1, 143.31, 112.49},
        {4, 8, 12, 2, 134.02, 120.29},
        {4, 8, 12, 4, 123.69, 130.34},
        {4, 8, 12, 8, 129.26, 124.72}},
       {0, 1}},
      {"02-21 181B DP8 TP8 PP6, MBS",
       "fp16",
       72,
       14336,
       64,
       {{8, 8, 6, 1, 139.82, 115.31}, {8, 8, 6, 2, 131.02, 123.05}, {8, 8, 6, 4, 121.48, 132.71}},
       {0, 1}},
      // 02-25: the TP 8 row from "GBS Variations", the others from "Tweaking
      // TP" (the same day).
      {"02-25 181B PP6 MBS4, TP 8 -> 4",
       "fp16",
       72,
       14336,
       64,
       {{8, 8, 6, 4, 114.11, 141.27}, {16, 4, 6, 4, 117.11, 137.66}},
       {}},
      {"02-25 181B MBS2, TP 4 -> 2 (PP 6 -> 12)",
       "fp16",
       72,
       14336,
       64,
       {{16, 4, 6, 2, 111.71, 144.31}, {16, 2, 12, 2, 112.50, 143.30}},
       {}},
      {"02-25 181B PP24 MBS1, TP 4 -> 2",
       "fp16",
       72,
       14336,
       64,
       {{4, 4, 24, 1, 130.60, 123.44}, {8, 2, 24, 1, 119.53, 134.88}},
       {0}},
      // "Re-do" (02-27).
      {"02-27 182B PP6 MBS4, TP 8 -> 4",
       "fp16",
       78,
       13824,
       96,
       {{8, 8, 6, 4, 118.24, 137.38}, {16, 4, 6, 4, 115.55, 140.57}},
       {}},
      // "Rebalancing layers" (02-28).
      {"02-28 176B PP12 MBS2, TP 8 -> 4",
       "bf16",
       70,
       14336,
       64,
       {{4, 8, 12, 2, 121.63, 128.92}, {8, 4, 12, 2, 102.03, 153.68}},
       {0}},
      {"02-28 178B PP12 MBS4, TP 8 -> 4",
       "bf16",
       82,
       13312,
       64,
       {{4, 8, 12, 4, 111.79, 141.76}, {8, 4, 12, 4, 104.82, 151.18}},
       {}},
      {"02-28 184B DP8 TP8 PP6, MBS",
       "bf16",
       100,
       12288,
       64,
       {{8, 8, 6, 2, 139.72, 117.91}, {8, 8, 6, 4, 120.96, 136.20}},
       {0}},
  };
  return s;
}

// 12 h^2 + 13 h per layer and the tied embedding (v h), as the chronicle
// sizes its models ("181B", "182B", ...).
double params_of(const Sweep& s) {
  const double h = s.hidden;
  return s.layers * (12 * h * h + 13 * h) + kVocab * h;
}

Workload workload_of(const Sweep& s, const Layout& r) {
  Workload w;
  w.name = s.name;
  w.params = params_of(s);
  w.layers = s.layers;
  w.hidden = s.hidden;
  w.heads = s.heads;
  w.seq_len = kSeq;
  w.global_batch = kGlobalBatch;
  w.micro_batch = r.micro;
  w.dtype = s.dtype;
  w.recompute = Recompute::full;
  w.flash_attention = false;  // 2022: Megatron's fused softmax, no flash attention
  w.tp = r.tp;
  w.pp = r.pp;
  w.dp = r.dp;
  w.zero = 1;
  w.gemm.source = "preset";
  w.gemm.of_gemm = 1;
  w.cluster.gpu = w.compute_gpu = "a100-80gb";
  w.cluster.nodes = kNodes;
  w.cluster.gpus_per_node = kGpusPerNode;
  return w;
}

double published_tokens_s(const Layout& r) {
  return static_cast<double>(kGlobalBatch) * kSeq / r.sec_per_it / (kNodes * kGpusPerNode);
}

struct Predicted {
  double tokens_s = 0;  // per GPU, the whole step
  StepCost step;
};

Predicted predicted(const Sweep& s, const Layout& r) {
  const StepCost c = test::step_on(workload_of(s, r), kNetwork);
  EXPECT_EQ(c.compute_source, "preset_curve") << s.name;
  return {c.tokens / (c.step_us * 1e-6) / (kNodes * kGpusPerNode), c};
}

double tp_us(const StepCost& c) {
  double t = 0;
  for (const auto& item : c.items)
    if (item.group == "tp") t += item.exposed_us;
  return t;
}

TEST(PublishedTp, TheTableIsTranscribedConsistently) {
  for (const Sweep& s : sweeps())
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
      const Layout& a = s.rows[i];
      EXPECT_EQ(a.dp * a.tp * a.pp, kNodes * kGpusPerNode) << s.name << " row " << i;
      if (i == 0) continue;
      EXPECT_NEAR(s.rows[i - 1].sec_per_it / a.sec_per_it, a.tflops / s.rows[i - 1].tflops, 0.005)
          << s.name << " row " << i << ": Sec/it and TFLOPs disagree";
    }
}

TEST(PublishedTp, TheChangeBetweenRowsIsWithinTenPercentWithThePresetCurve) {
  std::size_t pairs = 0, within = 0, tp_pairs = 0;
  double sum_error = 0;
  for (const Sweep& s : sweeps()) {
    std::vector<Predicted> p;
    for (const Layout& r : s.rows) p.push_back(predicted(s, r));
    for (std::size_t i = 0; i + 1 < s.rows.size(); ++i) {
      const Layout &a = s.rows[i], &b = s.rows[i + 1];
      const double published = published_tokens_s(b) / published_tokens_s(a);
      const double model = p[i + 1].tokens_s / p[i].tokens_s;
      const double error = model / published - 1;
      const bool known_miss = std::find(s.known_misses.begin(), s.known_misses.end(), i) != s.known_misses.end();
      const auto parts = [](const StepCost& c) {
        return fmt::format("{:.1f}+{:.1f}+{:.1f}+{:.1f}, products at {:.1f} TFLOP/s",
                           (c.compute_us + c.non_gemm_us) / 1e6, (c.bubble_us + c.imbalance_us) / 1e6, tp_us(c) / 1e6,
                           (c.exposed_us - tp_us(c)) / 1e6, c.rate_tflops);
      };
      std::printf(
          "%-40s dp%2d tp%d pp%2d mb%d -> dp%2d tp%d pp%2d mb%d: published x%.3f predicted x%.3f error %+5.1f%% "
          "(step s, compute+bubble+TP group+DP and PP: %s -> %s)%s\n",
          s.name, a.dp, a.tp, a.pp, a.micro, b.dp, b.tp, b.pp, b.micro, published, model, 100 * error,
          parts(p[i].step).c_str(), parts(p[i + 1].step).c_str(), known_miss ? "  (known miss, docs/model.md)" : "");
      ++pairs;
      if (a.tp != b.tp) ++tp_pairs;
      if (std::abs(error) <= 0.10) ++within;
      sum_error += std::abs(error);
      if (known_miss)
        EXPECT_GT(std::abs(error), 0.10) << s.name << " pair " << i
                                         << ": the model now meets it; drop it from known_misses and docs/model.md";
      else
        EXPECT_LE(std::abs(error), 0.10) << s.name << " pair " << i;
    }
  }
  std::printf("%zu of %zu pairs within 10%% (%zu change the TP degree), mean |error| %.2f%%\n", within, pairs, tp_pairs,
              100 * sum_error / pairs);
  EXPECT_EQ(pairs, 12u);
  EXPECT_EQ(tp_pairs, 6u);
}

}  // namespace
}  // namespace fb::model::published_tp
