// Issue 38: the model's compute from a GPU's preset GEMM curve (published
// benchmarks, profiles/presets/gpus.yaml), which source each step used, and
// the change in throughput between rows of published training tables that
// run one model at several micro-batch sizes on the same GPUs, predicted
// with the preset curve and nothing fitted to those rows.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/messages.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/model/quotes.hpp"
#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

using test::refusal;

std::string h200_record(const char* file) {
  return std::string(FB_SOURCE_DIR) + "/results/h200-device-check-2026-12-04/" + file;
}

bool says(const StepCost& s, const std::string& text) {
  for (const auto& a : s.assumptions)
    if (a.find(text) != std::string::npos) return true;
  return false;
}

// The H200's preset is this project's own measurement: the square sizes the
// binary wrote (scripts/device-check.sh, 2026-12-04), to the 0.1 TFLOP/s the
// preset gives.
TEST(PresetCurves, TheH200CurveIsTheRecordTheBinaryWroteOnIt) {
  const Results r = load_results(h200_record("gemm-squares.jsonl"));
  const GemmPresetCurve& c = builtin_presets().gpu("h200-sxm", "test").gemm_curve;
  std::size_t matched = 0;
  for (const GemmLine& line : r.gemms) {
    ASSERT_EQ(line.m, line.n);
    const auto& points = line.dtype == "bfloat16" ? c.bf16 : c.fp16;
    for (const auto& [size, tflops] : points)
      if (size == line.m) {
        EXPECT_NEAR(tflops, line.tflops, 0.05) << line.dtype << " " << line.m;
        ++matched;
      }
  }
  EXPECT_EQ(matched, c.bf16.size() + c.fp16.size()) << "every preset point is a line of the record";
  EXPECT_NE(c.source.find("gemm-squares.jsonl"), std::string::npos);
}

// The validation tables' GPUs have curves; each point sits under the GPU's
// peak, sizes ascend, and the source names the benchmark.
TEST(PresetCurves, TheValidationTablesGpusHaveCitedCurvesUnderTheirPeak) {
  for (const char* name : {"a100-40gb", "a100-80gb", "h100-sxm", "h200-sxm"}) {
    const GpuPreset& g = builtin_presets().gpu(name, "test");
    ASSERT_FALSE(g.gemm_curve.empty()) << name;
    for (const auto* points : {&g.gemm_curve.bf16, &g.gemm_curve.fp16})
      for (std::size_t i = 0; i < points->size(); ++i) {
        EXPECT_GT((*points)[i].second, 0) << name;
        EXPECT_LT((*points)[i].second, g.bf16_tflops) << name << ": no benchmark beats the peak";
        if (i > 0) {
          EXPECT_GT((*points)[i].first, (*points)[i - 1].first) << name;
        }
      }
    EXPECT_FALSE(g.gemm_curve.source.empty()) << name;
  }
  EXPECT_TRUE(builtin_presets().gpu("b200", "test").gemm_curve.empty()) << "no published curve: none is made up";
}

// The preset curves are bf16 and fp16 sweeps: an fp8 workload priced from
// one is priced at its bf16 rates, and the step says so and how to measure fp8.
TEST(PresetCurves, AnFp8WorkloadOnAPresetCurveIsPricedAtItsBf16RatesAndSaysSo) {
  const std::string compute = "{gemm_curve: preset, of_gemm: 0.6}";
  model::Workload fp8 = test::seven_billion_on("h100-sxm", compute);
  fp8.dtype = "fp8_e4m3";
  const StepCost s = test::step_on(fp8, "");
  EXPECT_EQ(s.compute_source, "preset_curve");
  EXPECT_TRUE(says(s, "the preset curve has no fp8 points, so the fp8 products are priced at its bf16 rates"));
  EXPECT_TRUE(says(s, "fabricbench gemm --shapes-of WORKLOAD -d fp8_e4m3"));
  EXPECT_DOUBLE_EQ(s.rate_tflops, test::step_on(test::seven_billion_on("h100-sxm", compute), "").rate_tflops);
  EXPECT_FALSE(says(test::step_on(test::seven_billion_on("h100-sxm", compute), ""), "no fp8 points"));
}

TEST(PresetCurves, AWorkloadAsksForThePresetCurveAndTheStepSaysSo) {
  const StepCost s = test::step_on(test::seven_billion_on("h100-sxm", "{gemm_curve: preset, of_gemm: 0.6}"), "");
  EXPECT_EQ(s.compute_source, "preset_curve");
  EXPECT_TRUE(says(s, "each read from h100-sxm's preset curve by size")) << "names the curve";
  EXPECT_TRUE(says(s, "zzc0721/torch-performance-test-data issue #79")) << "and cites its source";
  // The layer's products are 4096 x 12288 x 4096 and alike: the curve's
  // rate there (788.72 at 4096, 797.51 at 8192), times of_gemm.
  EXPECT_GT(s.rate_tflops, 0.6 * 788.72);
  EXPECT_LT(s.rate_tflops, 0.6 * 797.51);
  // Every other source says which it is; an MFU workload keeps its rate.
  const StepCost mfu = test::step_on(test::seven_billion_on("h100-sxm", "{mfu: 0.4}"), "");
  EXPECT_EQ(mfu.compute_source, "mfu");
  EXPECT_DOUBLE_EQ(mfu.rate_tflops, 0.4 * 989);
  EXPECT_EQ(test::step_on(test::seven_billion_on("h100-sxm", "{tflops: 400}"), "").compute_source, "stated_tflops");
  EXPECT_EQ(
      test::step_on(test::seven_billion_on("h100-sxm", "{gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5}"), "")
          .compute_source,
      "stated_curve");
  // A GPU without a curve is refused, naming the fix.
  const std::string why =
      refusal([] { (void)test::step_on(test::seven_billion_on("b200", "{gemm_curve: preset, of_gemm: 0.6}"), ""); });
  EXPECT_NE(why.find("GPU preset 'b200' has no gemm_curve"), std::string::npos) << why;
  EXPECT_NE(why.find("fabricbench gemm --shapes-of WORKLOAD"), std::string::npos) << why;
}

// A quote on the GPU the record was measured on uses the record; a quote on
// any other GPU uses that GPU's preset curve, and one without a curve the
// record scaled by peak, as before; each says which.
TEST(PresetCurves, QuotesUseTheRecordForItsGpuAndThePresetCurveForTheOthers) {
  const std::string record = h200_record("gemm-shapes-7b.jsonl");
  const Workload w = test::seven_billion_on("h200-sxm", "{gemm_curve: " + record + ", of_gemm: 0.6}");
  EXPECT_EQ(w.gemm.measured_gpu, "NVIDIA H200") << "the record's inventory names its GPU";
  const QuoteSet set = parse_quotes(
      "currency: USD\njob: {tokens: 1B}\nquotes:\n"
      "  - {name: on-h200, gpu: h200-sxm, gpus_per_node: 8, nodes: 1, price_per_gpu_hour: 3}\n"
      "  - {name: on-h100, gpu: h100-sxm, gpus_per_node: 8, nodes: 1, price_per_gpu_hour: 2}\n"
      "  - {name: on-b200, gpu: b200, gpus_per_node: 8, nodes: 1, price_per_gpu_hour: 5}\n");
  const auto results = evaluate_quotes(set, w, builtin_presets(), "");
  ASSERT_EQ(results.size(), 3u);
  for (const QuoteResult& r : results) {
    const std::string& name = r.quote.name;
    if (name == "on-h200") {
      EXPECT_EQ(r.step.compute_source, "measured_curve");
      EXPECT_TRUE(says(r.step, "measured at its own shape in " + record)) << name;
    } else if (name == "on-h100") {
      EXPECT_EQ(r.step.compute_source, "preset_curve");
      EXPECT_TRUE(says(r.step, "h100-sxm's preset curve")) << name;
      EXPECT_TRUE(says(r.step, "was measured on h200-sxm, not this GPU")) << name;
    } else {
      EXPECT_EQ(r.step.compute_source, "measured_curve");
      EXPECT_TRUE(says(r.step, "scaled by peak 2250/989 from h200-sxm (b200 has no preset GEMM curve)")) << name;
    }
  }
  // A workload that names another GPU than its record's keeps the record on
  // its own GPU, scaled by peak from the GPU the record names (a lent H100
  // measuring for an h200-sxm workload: tests/gpu/gpu_cli_test.cpp).
  const StepCost own =
      test::step_on(test::seven_billion_on("a100-80gb", "{gemm_curve: " + record + ", of_gemm: 0.6}"), "");
  EXPECT_EQ(own.compute_source, "measured_curve");
  EXPECT_TRUE(says(own, "scaled by peak 312/989 from h200-sxm) =")) << "no preset-curve note on its own GPU";
}

// --- Validation: published tables -------------------------------------------

struct SweepRow {
  int seq, micro;
  int grad_accum;             // GradAccum: micro-batches per optimizer step
  double params;              // NumParams as the table prints it
  double published_tokens_s;  // Throughput (T/s/GPU)
};

struct Table {
  const char* name;  // "llm-foundry A100 80GB, MPT-350M"
  const char* gpu;   // preset
  int layers, hidden;
  Recompute recompute;  // the table's "Activation Checkpointing"
  std::vector<SweepRow> rows;
  // Pairs (by the index of their first row) the model misses by more than
  // 10%, reported in docs/model.md; the test keeps them honest both ways.
  std::vector<std::size_t> known_misses;
};

// mosaicml/llm-foundry, scripts/train/benchmarking/README.md (MPT training
// benchmarks, commit 061f2c7): every row on 8 GPUs of one model at one
// activation-checkpointing setting, FSDP FULL_SHARD, bf16. Micro-batch and
// sequence length change together between rows; GradAccum (micro-batches
// per optimizer step) as each row gives it. MPT sizes (d_model,
// n_layers) as in the repository's scripts/train/yamls/pretrain/mpt-*.yaml
// (mpt-760m: 1536, 24); 12 L d^2 + 50368 d comes within 0.5% of the
// 512-token rows' NumParams (longer rows add position embeddings).
const std::vector<Table>& tables() {
  static const std::vector<Table> t = {
      {"llm-foundry A100 80GB, MPT-125M",
       "a100-80gb",
       12,
       768,
       Recompute::none,
       {{65536, 1, 2, 174070272, 20368},
        {32768, 2, 2, 148904448, 36407},
        {16384, 4, 2, 136321536, 60040},
        {8192, 8, 2, 130030080, 90392},
        {4096, 16, 2, 126884352, 118396},
        {2048, 40, 2, 125311488, 142830},
        {1024, 64, 2, 124525056, 156468},
        {512, 128, 2, 124131840, 165681}},
       {}},
      {"llm-foundry A100 80GB, MPT-350M",
       "a100-80gb",
       24,
       1024,
       Recompute::none,
       {{65536, 1, 2, 420997120, 7524},
        {32768, 2, 2, 387442688, 13652},
        {16384, 4, 2, 370665472, 23559},
        {8192, 8, 2, 362276864, 36569},
        {4096, 16, 2, 358082560, 49555},
        {2048, 32, 2, 355985408, 58782},
        {1024, 64, 2, 354936832, 64813},
        {512, 128, 2, 354412544, 69330}},
       {}},
      {"llm-foundry A100 80GB, MPT-760M",
       "a100-80gb",
       24,
       1536,
       Recompute::none,
       {{32768, 1, 2, 807656448, 8802},
        {16384, 3, 2, 782490624, 14274},
        {8192, 6, 2, 769907712, 20933},
        {4096, 12, 2, 763616256, 27351},
        {2048, 24, 2, 760470528, 32434},
        {1024, 48, 2, 758897664, 29765},
        {512, 96, 2, 758111232, 29446}},
       {4}},
      {"llm-foundry A100 80GB, MPT-1B",
       "a100-80gb",
       24,
       2048,
       Recompute::none,
       {{32768, 1, 4, 1378865152, 6275},
        {16384, 2, 4, 1345310720, 9956},
        {8192, 3, 4, 1328533504, 13814},
        {4096, 7, 4, 1320144896, 17807},
        {2048, 14, 4, 1315950592, 20513},
        {1024, 18, 4, 1313853440, 22112},
        {512, 56, 4, 1312804864, 23148}},
       {}},
      {"llm-foundry A100 80GB, MPT-3B",
       "a100-80gb",
       32,
       2560,
       Recompute::none,
       {{16384, 1, 6, 2688537600, 5529},
        {8192, 3, 6, 2667566080, 7695},
        {4096, 5, 6, 2657080320, 9457},
        {2048, 10, 2, 2651837440, 10811},
        {1024, 20, 6, 2649216000, 11580},
        {512, 40, 6, 2647905280, 12127}},
       {}},
      {"llm-foundry H100 80GB, MPT-760M",
       "h100-sxm",
       24,
       1536,
       Recompute::none,
       {{32768, 1, 2, 807656448, 16291},
        {16384, 3, 2, 782490624, 27815},
        {8192, 6, 2, 769907712, 41825},
        {4096, 12, 2, 763616256, 55459},
        {2048, 24, 2, 760470528, 63147},
        {1024, 48, 2, 758897664, 78581},
        {512, 96, 2, 758111232, 83749}},
       {4}},
      {"llm-foundry H100 80GB, MPT-1B",
       "h100-sxm",
       24,
       2048,
       Recompute::none,
       {{32768, 1, 4, 1378865152, 12025},
        {16384, 2, 4, 1345310720, 19649},
        {8192, 3, 4, 1328533504, 29157},
        {4096, 7, 4, 1320144896, 38535},
        {2048, 14, 1, 1315950592, 45455},
        {1024, 18, 4, 1313853440, 48910},
        {512, 56, 4, 1312804864, 52275}},
       {}},
      {"llm-foundry H100 80GB, MPT-3B",
       "h100-sxm",
       32,
       2560,
       Recompute::none,
       {{16384, 1, 6, 2688537600, 11152},
        {8192, 3, 6, 2667566080, 16578},
        {4096, 5, 6, 2657080320, 20964},
        {1024, 20, 6, 2649216000, 27046},
        {512, 40, 6, 2647905280, 27965}},
       {}},
      {"llm-foundry A100 40GB, MPT-7B",
       "a100-40gb",
       32,
       4096,
       Recompute::full,
       {{16384, 1, 4, 6717579264, 2249},
        {8192, 3, 4, 6684024832, 2887},
        {4096, 6, 4, 6667247616, 3366},
        {2048, 12, 4, 6658859008, 3679},
        {1024, 24, 4, 6654664704, 3854},
        {512, 48, 4, 6652567552, 3895}},
       {}},
      {"llm-foundry A100 40GB, MPT-13B",
       "a100-40gb",
       40,
       5120,
       Recompute::full,
       {{8192, 1, 16, 12885411840, 1407},
        {4096, 2, 16, 12864440320, 1603},
        {2048, 4, 16, 12853954560, 1668},
        {1024, 8, 16, 12848711680, 1727},
        {512, 16, 16, 12846090240, 1763}},
       {}},
  };
  return t;
}

// MPT's vocab_size in llm-foundry's scripts/train/yamls/pretrain/mpt-*.yaml
// (the 50368 d of the NumParams check above): the loss's logits per token.
constexpr int kMptVocab = 50368;

// The model's compute-only tokens/s per GPU for a row: the step's hardware
// FLOPs (6N + attention's 12 L h s per token, recompute included) at the
// rate the GPU's preset curve gives the layer's own products (of_gemm 1,
// the curve's own rate), attention's in flash attention's kernel at the
// GPU's attention curve where its preset has one, and the non-GEMM work
// (norms, GeLU, residual adds, the embedding, the loss, the optimizer step)
// at the GPU's datasheet memory bandwidth. `products` is the compute
// without the non-GEMM work.
struct Predicted {
  double tokens_s = 0;
  double products_tokens_s = 0;
  double non_gemm_share = 0;  // of the compute with it
};

Predicted predicted_tokens_s(const Table& t, const SweepRow& r) {
  Workload w;
  w.name = t.name;
  w.params = r.params;
  w.layers = t.layers;
  w.hidden = t.hidden;
  w.heads = t.hidden / 128;
  w.vocab = kMptVocab;
  w.seq_len = r.seq;
  w.micro_batch = r.micro;
  w.global_batch = r.micro * 8 * r.grad_accum;
  w.recompute = t.recompute;
  w.zero = 3;
  w.gemm.source = "preset";
  w.gemm.of_gemm = 1;
  w.cluster.gpu = w.compute_gpu = t.gpu;
  w.cluster.nodes = 1;
  w.cluster.gpus_per_node = 8;
  const StepCost s = test::step_on(w, "");
  EXPECT_EQ(s.compute_source, "preset_curve");
  EXPECT_GT(s.non_gemm_us, 0) << t.name << ": every validation GPU has a datasheet memory bandwidth";
  return {s.tokens / ((s.compute_us + s.non_gemm_us) * 1e-6) / 8, s.tokens / (s.compute_us * 1e-6) / 8,
          s.non_gemm_us / (s.compute_us + s.non_gemm_us)};
}

TEST(PublishedTables, TheChangeBetweenRowsIsWithinTenPercentWithThePresetCurve) {
  std::size_t pairs = 0, within = 0, products_within = 0;
  double sum_error = 0, sum_products_error = 0;
  for (const Table& t : tables()) {
    std::vector<Predicted> predicted;
    for (const SweepRow& r : t.rows) predicted.push_back(predicted_tokens_s(t, r));
    for (std::size_t i = 0; i + 1 < t.rows.size(); ++i) {
      const SweepRow &a = t.rows[i], &b = t.rows[i + 1];
      const double published = b.published_tokens_s / a.published_tokens_s;
      const double model = predicted[i + 1].tokens_s / predicted[i].tokens_s;
      const double error = model / published - 1;
      const double products_error = predicted[i + 1].products_tokens_s / predicted[i].products_tokens_s / published - 1;
      const bool known_miss = std::find(t.known_misses.begin(), t.known_misses.end(), i) != t.known_misses.end();
      std::printf(
          "%-36s seq %5d mb %3d -> seq %5d mb %3d: published x%.3f predicted x%.3f error %+5.1f%% (compute alone "
          "%+5.1f%%; non-GEMM %.1f%% -> %.1f%% of compute)%s\n",
          t.name, a.seq, a.micro, b.seq, b.micro, published, model, 100 * error, 100 * products_error,
          100 * predicted[i].non_gemm_share, 100 * predicted[i + 1].non_gemm_share,
          known_miss ? "  (known miss, docs/model.md)" : "");
      ++pairs;
      if (std::abs(error) <= 0.10) ++within;
      if (std::abs(products_error) <= 0.10) ++products_within;
      sum_error += std::abs(error);
      sum_products_error += std::abs(products_error);
      if (known_miss)
        EXPECT_GT(std::abs(error), 0.10) << t.name << " pair " << i
                                         << ": the model now meets it; drop it from known_misses and docs/model.md";
      else
        EXPECT_LE(std::abs(error), 0.10) << t.name << " seq " << a.seq << " -> " << b.seq;
    }
  }
  std::printf("%zu of %zu pairs within 10%%, mean |error| %.2f%% (compute alone: %zu, %.2f%%)\n", within, pairs,
              100 * sum_error / pairs, products_within, 100 * sum_products_error / pairs);
  EXPECT_EQ(pairs, 56u);
}

}  // namespace
}  // namespace fb::model
