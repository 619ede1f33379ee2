// Issue 38: the step's non-GEMM work (norms, activations, residual adds, the
// optimizer step) priced as the bytes its kernels move over the GPU's
// datasheet memory bandwidth (model/non_gemm.hpp). Every expected figure is
// worked by hand from the layer's shapes in the comment above it.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "../support/messages.hpp"
#include "fabricbench/model/non_gemm.hpp"
#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

bool says(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& a : lines)
    if (a.find(text) != std::string::npos) return true;
  return false;
}

// h 1024, 8 heads, sequence 2048, micro-batch 2, tp 2, bf16 activations:
// 4096 tokens per micro-batch, 8192 bytes per element of a token's width.
Workload layer_workload() {
  Workload w;
  w.name = "layer";
  w.params = 1e9;
  w.layers = 4;
  w.hidden = 1024;
  w.heads = 8;
  w.seq_len = 2048;
  w.micro_batch = 2;
  w.tp = 2;
  w.act_bytes = 2;
  return w;
}

TEST(NonGemm, ALayersBytesAreItsKernelsReadsAndWritesByHand) {
  Workload w = layer_workload();
  // Forward, elements per token: two norms (read x, write it) 2 x 2h = 4096,
  // two residual adds (read two, write one) 2 x 3h = 6144, GeLU (read and
  // write 4h/tp = 2048) 4096: 14336; x 4096 tokens x 2 bytes = 117440512.
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::forward), 117440512.0);
  // Backward: two norms (read input and gradient, write one) 2 x 3h = 6144,
  // two gradient sums 2 x 3h = 6144, GeLU backward 3 x 2048 = 6144: 18432;
  // x 8192 = 150994944.
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::backward), 150994944.0);
  // Full recompute runs the forward again in the backward: 150994944 +
  // 117440512.
  w.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::backward), 268435456.0);
  // Sequence parallelism splits the h-wide tensors over tp (h/tp = 512):
  // forward 10 x 512 + 4096 = 9216; x 8192 = 75497472.
  w = layer_workload();
  w.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::forward), 75497472.0);
  // Without flash attention the softmax runs on its own over s x heads/tp =
  // 2048 x 8 / 2 = 8192 scores per token: forward + 2 x 8192 = 30720 x 8192
  // = 251658240; backward + 3 x 8192 = 43008 x 8192 = 352321536; selective
  // recompute repeats the softmax forward: 59392 x 8192 = 486539264.
  w = layer_workload();
  w.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::forward), 251658240.0);
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::backward), 352321536.0);
  w.recompute = Recompute::selective;
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::backward), 486539264.0);
}

// The kernels outside the layers, per micro-batch (4096 tokens, tp 2, 2
// bytes): the lookup reads a row and writes it, 2h = 2048 elements per
// token; the loss reads the logits, vocab/tp = 50304 / 2 = 25152 elements.
TEST(NonGemm, TheEmbeddingAndTheLossMoveTheirRowsByHand) {
  Workload w = layer_workload();
  w.vocab = 50304;
  // Forward: (2048 + 25152) x 2 bytes x 4096 tokens = 222822400.
  EXPECT_DOUBLE_EQ(model_non_gemm_bytes(w, Pass::forward), 222822400.0);
  // Backward: the loss reads the logits and writes their gradient, 2 x
  // 25152; the scatter-add reads the output's gradient and the embedding
  // gradient's row and writes the row, 3 x 1024: 53376 x 2 x 4096 =
  // 437256192.
  EXPECT_DOUBLE_EQ(model_non_gemm_bytes(w, Pass::backward), 437256192.0);
  // Without a vocabulary the loss moves nothing: the embedding alone.
  w.vocab = 0;
  EXPECT_DOUBLE_EQ(model_non_gemm_bytes(w, Pass::forward), 2048.0 * 2 * 4096);
  EXPECT_DOUBLE_EQ(model_non_gemm_bytes(w, Pass::backward), 3072.0 * 2 * 4096);
  // Recompute repeats a layer's forward, not the embedding's or the loss's.
  w.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(model_non_gemm_bytes(w, Pass::backward), 3072.0 * 2 * 4096);
}

// Dropout (training: dropout above 0) reads its input and writes it dropped
// (2 bytes each) and its keep mask (1 byte): 5 bytes per element, after the
// attention's output projection and after the MLP, h wide each.
TEST(NonGemm, DropoutReadsAndWritesItsInputAndItsMask) {
  Workload w = layer_workload();
  w.dropout = 0.1;
  // Forward: 14336 elements x 2 bytes + 2 x 5 x 1024 = 38912 bytes per
  // token x 4096 = 159383552; backward (reads the gradient and the mask,
  // writes a gradient): 18432 x 2 + 10240 = 47104 x 4096 = 192937984.
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::forward), 159383552.0);
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::backward), 192937984.0);
  // On the embeddings too: 5 x 1024 more each way.
  EXPECT_DOUBLE_EQ(model_non_gemm_bytes(w, Pass::forward), (4096.0 + 5120) * 4096);
  // Without flash attention the probabilities are dropped too, over s x
  // heads/tp = 8192 scores: the forward 30720 x 2 + 10240 + 5 x 8192 = 112640
  // bytes per token x 4096 = 461373440.
  w.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::forward), 461373440.0);
  // None by default.
  EXPECT_DOUBLE_EQ(layer_workload().dropout, 0);
}

// Rotary embeddings (model: rotary) read the query and key, h/tp = 512
// elements each per token, and write them rotated; the backward rotates
// their gradients back: 4 x 512 x 2 = 4096 bytes per token each way.
TEST(NonGemm, RotaryEmbeddingsRotateTheQueryAndKey) {
  Workload w = layer_workload();
  w.rotary = true;
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::forward), (28672.0 + 4096) * 4096);
  EXPECT_DOUBLE_EQ(layer_non_gemm_bytes(w, Pass::backward), (36864.0 + 4096) * 4096);
}

TEST(NonGemm, AdamReadsAndWritesItsStatesOncePerParameter) {
  Workload w = layer_workload();
  // Reads fp32 parameter, momentum, variance (12) and a bf16 gradient (2),
  // writes the three (12) and the bf16 parameter (2), the gradient norm
  // reads the gradient again (2): 30 bytes.
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(w), 30.0);
  // An fp32 main_grad: 12 + 4 + 12 + 2 + 4 = 34.
  w.grad_memory_bytes = 4;
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(w), 34.0);
}

// 6.7B, 32 layers of h 4096, sequence 4096, micro-batch 2, global batch 64 on
// 8 H100 SXM (dp 8, 4 micro-batches, DDP), its products from the preset curve.
Workload step_workload(const std::string& gpu) {
  return parse_workload(
      "model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
      "training: {global_batch: 64, micro_batch: 2, dtype: bf16}\n"
      "compute: {gemm_curve: preset, of_gemm: 0.6}\n"
      "cluster: {gpu: " +
      gpu + ", nodes: 1, gpus_per_node: 8}\n");
}

TEST(NonGemm, TheStepPricesItAtTheGpusMemoryBandwidthBesideTheProducts) {
  const StepCost s = test::step_on(step_workload("h100-sxm"), "");
  // Per layer and micro-batch (8192 tokens, 2 bytes): forward 18h = 73728
  // elements per token, 1207959552 bytes; backward 24h = 98304, 1610612736
  // bytes; x 32 layers x 4 micro-batches = 360777252864. Adam over all
  // 6.7e9 parameters (DDP) at 30 bytes: 2.01e11. The embedding (no
  // vocabulary given: no loss) reads and writes 2h per token forward and 3h
  // backward: 5 x 4096 x 2 bytes x 8192 tokens x 4 micro-batches =
  // 1342177280. Together 5.63119430144e11 bytes at 3.35 TB/s: 168095.35
  // us, of which the optimizer 60000 us.
  EXPECT_NEAR(s.non_gemm_bytes, 563119430144.0, 1.0);
  EXPECT_NEAR(s.non_gemm_us, 168095.35, 0.01);
  EXPECT_NEAR(s.optimizer_us, 60000.0, 0.01);
  // It adds to the step beside the products, and counts as compute in the
  // efficiency: one node, no pipeline, nothing hidden (overlap 0).
  EXPECT_NEAR(s.step_us, s.compute_us + s.non_gemm_us + s.exposed_us, 1e-6 * s.step_us);
  EXPECT_NEAR(s.efficiency, (s.compute_us + s.non_gemm_us) / s.step_us, 1e-12);
  EXPECT_TRUE(says(s.assumptions,
                   "non-GEMM work: 563.1 GB per GPU per step at h100-sxm's 3.35 TB/s memory "
                   "bandwidth = 168.1 ms"));
  EXPECT_TRUE(says(s.assumptions, "the embedding (the loss not priced: no model: vocab)"));
}

TEST(NonGemm, AGpuWithMoreMemoryBandwidthSpendsLessTimeOnIt) {
  const Workload w = step_workload("h100-sxm");
  Presets faster = builtin_presets();
  for (GpuPreset& g : faster.gpus)
    if (g.name == "h100-sxm") g.memory_tbps *= 2;
  const StepCost slow = test::step_on(w, "");
  const StepCost fast = predict_step(w, fabric_for(w, "", faster), faster);
  EXPECT_DOUBLE_EQ(fast.compute_us, slow.compute_us) << "the products do not move";
  EXPECT_NEAR(fast.non_gemm_us, slow.non_gemm_us / 2, 1e-9 * slow.non_gemm_us);
  EXPECT_NEAR(slow.step_us - fast.step_us, slow.non_gemm_us / 2, 1e-6 * slow.step_us);
  // The H200's 4.8 TB/s against the H100's 3.35 on the same layer bytes.
  const StepCost h200 = test::step_on(step_workload("h200-sxm"), "");
  EXPECT_NEAR(h200.non_gemm_us, slow.non_gemm_us * 3.35 / 4.8, 1e-9 * slow.non_gemm_us);
}

TEST(NonGemm, AWholeStepRateHoldsItAlreadyAndAGpuWithoutBandwidthSaysSo) {
  Workload mfu = step_workload("h100-sxm");
  mfu.gemm = GemmCurve{};
  mfu.mfu = 0.4;
  const StepCost m = test::step_on(mfu, "");
  EXPECT_EQ(m.non_gemm_us, 0);
  EXPECT_TRUE(says(m.assumptions, "non-GEMM work (norms, activations, optimizer): inside the mfu rate"));
  // A GPU preset laid over by the user's own (--presets-add) that gives no
  // memory bandwidth: a stated curve prices its products alone, and says so.
  Presets own = builtin_presets();
  for (GpuPreset& g : own.gpus)
    if (g.name == "h800-sxm") g.memory_tbps = 0;
  const Workload stated = parse_workload(
      "model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
      "training: {global_batch: 64, micro_batch: 2, dtype: bf16}\n"
      "compute: {gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5}\n"
      "cluster: {gpu: h800-sxm, nodes: 1, gpus_per_node: 8}\n");
  const StepCost unpriced = predict_step(stated, test::preset_fabric(stated, ""), own);
  EXPECT_EQ(unpriced.compute_source, "stated_curve");
  EXPECT_EQ(unpriced.non_gemm_us, 0);
  EXPECT_TRUE(says(unpriced.caveats, "h800-sxm's preset gives no memory bandwidth (memory_tbps)"));
}

// Every memory bandwidth a preset gives is printed in its source, as the
// datasheet prints it (GB/s with a thousands comma, or TB/s), and every
// built-in GPU has one: none prices its steps without the non-GEMM work.
TEST(NonGemm, EveryPresetMemoryBandwidthIsTheOneItsSourceCites) {
  std::size_t given = 0;
  for (const GpuPreset& g : builtin_presets().gpus) {
    EXPECT_GT(g.memory_tbps, 0) << g.name << ": no memory_tbps";
    if (g.memory_tbps <= 0) continue;
    ++given;
    const long gbps = std::lround(g.memory_tbps * 1000);
    const std::string as_gbps =
        gbps >= 1000 ? fmt::format("{},{:03d} GB/s", gbps / 1000, gbps % 1000) : fmt::format("{} GB/s", gbps);
    const std::string as_tbps = fmt::format("{:g} TB/s", g.memory_tbps);
    EXPECT_TRUE(g.source.find(as_gbps) != std::string::npos || g.source.find(as_tbps) != std::string::npos)
        << g.name << ": " << as_gbps << " or " << as_tbps << " in: " << g.source;
  }
  EXPECT_GE(given, 15u);
  const Presets& p = builtin_presets();
  EXPECT_DOUBLE_EQ(p.gpu("a100-40gb", "test").memory_tbps, 1.555);
  EXPECT_DOUBLE_EQ(p.gpu("a100-80gb", "test").memory_tbps, 2.039);
  EXPECT_DOUBLE_EQ(p.gpu("h100-sxm", "test").memory_tbps, 3.35);
  EXPECT_DOUBLE_EQ(p.gpu("h200-sxm", "test").memory_tbps, 4.8);
  EXPECT_DOUBLE_EQ(p.gpu("h800-sxm", "test").memory_tbps, 3.35);
  EXPECT_DOUBLE_EQ(p.gpu("h20", "test").memory_tbps, 4.0);
  EXPECT_DOUBLE_EQ(p.gpu("rtx-4090", "test").memory_tbps, 1.008);
}

// The fields that turn these rows on: model: vocab and rotary, training:
// dropout; none by default, and refused where they cannot apply.
TEST(NonGemm, TheWorkloadSaysItsVocabularyDropoutAndRotaryEmbeddings) {
  const std::string base =
      "training: {global_batch: 64, micro_batch: 2, dropout: 0.1}\n"
      "compute: {mfu: 0.4}\ncluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n";
  const Workload w = parse_workload(
      "model: {params: 7B, layers: 32, hidden: 4096, seq_len: 4096, vocab: 32000, rotary: true}\n" + base);
  EXPECT_EQ(w.vocab, 32000);
  EXPECT_TRUE(w.rotary);
  EXPECT_DOUBLE_EQ(w.dropout, 0.1);
  const Workload plain = step_workload("h100-sxm");
  EXPECT_EQ(plain.vocab, 0);
  EXPECT_FALSE(plain.rotary);
  EXPECT_DOUBLE_EQ(plain.dropout, 0);
  const std::string always = test::refusal([&] {
    (void)parse_workload("model: {params: 7B, layers: 32, hidden: 4096, seq_len: 4096}\n" +
                         std::string("training: {global_batch: 64, micro_batch: 2, dropout: 1}\n") +
                         "compute: {mfu: 0.4}\ncluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n");
  });
  EXPECT_NE(always.find("workload: training: dropout: a probability below 1"), std::string::npos) << always;
  const std::string shapeless = test::refusal(
      [&] { (void)parse_workload("model: {params: 25M, forward_flops_per_sample: 8G, vocab: 1000}\n" + base); });
  EXPECT_NE(shapeless.find("workload: model: vocab: a model given by forward_flops_per_sample"), std::string::npos)
      << shapeless;
}

}  // namespace
}  // namespace fb::model
