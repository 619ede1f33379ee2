// Today's clusters in the presets (Blackwell, AMD, 800G, EFA, TCP), a user's
// presets file laid over the built-in set, and every shipped quotes file
// priced with them.
#include "fabricbench/model/presets.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/quotes.hpp"
#include "model_workloads.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb::model {
namespace {

using test::refusal;

TEST(TodaysPresets, GpusHaveTheirDatasheetFiguresArchAndSource) {
  const Presets& p = builtin_presets();
  struct Want {
    const char* name;
    GpuArch arch;
    double memory, bf16, fp8;
    const char* node;
  };
  const Want wants[] = {
      {"b200", GpuArch::blackwell, 180, 2250, 4500, "nvlink5-8"},
      {"b300", GpuArch::blackwell, 288, 2250, 4500, "nvlink5-8"},
      {"gb200", GpuArch::blackwell, 186, 2500, 5000, "nvl72-tray-4"},
      {"gb300", GpuArch::blackwell, 279, 2500, 5000, "nvl72-tray-4"},
      {"mi300x", GpuArch::cdna3, 192, 1307.4, 2614.9, "xgmi-mi300x-8"},
      {"mi325x", GpuArch::cdna3, 256, 1307.4, 2614.9, "xgmi-mi300x-8"},
  };
  for (const Want& w : wants) {
    const GpuPreset& g = p.gpu(w.name, "test");
    EXPECT_EQ(g.arch, w.arch) << w.name;
    EXPECT_DOUBLE_EQ(g.memory_gib, w.memory) << w.name;
    EXPECT_DOUBLE_EQ(g.bf16_tflops, w.bf16) << w.name;
    EXPECT_DOUBLE_EQ(g.fp16_tflops, w.bf16) << w.name;
    EXPECT_DOUBLE_EQ(g.fp8_tflops, w.fp8) << w.name;
    EXPECT_EQ(g.node, w.node) << w.name;
    EXPECT_NE(g.source.find("datasheet"), std::string::npos) << w.name << ": " << g.source;
    EXPECT_NE(g.source.find("dense"), std::string::npos) << w.name << ": the source says which figure is dense";
  }
  // AMD is priced but not measured, and says so; NVIDIA's are measured.
  EXPECT_NE(std::string(unmeasured_reason(GpuArch::cdna3)).find("RCCL is not supported"), std::string::npos);
  EXPECT_TRUE(unmeasured_reason(GpuArch::blackwell).empty());
  EXPECT_TRUE(unmeasured_reason(GpuArch::hopper).empty());
  EXPECT_EQ(name(GpuArch::blackwell), "blackwell");
  EXPECT_EQ(p.gpu("h100-sxm", "test").fp8_tflops, 0);  // not given: listed as absent
}

TEST(TodaysPresets, NodesAndNetworksHaveTheirFiguresAndSource) {
  const Presets& p = builtin_presets();
  const NodePreset& hgx = p.node("nvlink5-8", "test");
  EXPECT_EQ(hgx.gpus, 8);
  EXPECT_DOUBLE_EQ(hgx.line_gbps, 900);  // 1.8 TB/s both directions
  EXPECT_GT(hgx.nvls_gbps, 0);
  const NodePreset& tray = p.node("nvl72-tray-4", "test");
  EXPECT_EQ(tray.gpus, 4);
  EXPECT_EQ(tray.domain_gpus, 72);  // the rack's NVLink domain: 18 trays
  EXPECT_GT(tray.nvls_gbps, 0);
  EXPECT_EQ(hgx.domain_gpus, 8);  // the host's own
  const NodePreset& amd = p.node("xgmi-mi300x-8", "test");
  EXPECT_DOUBLE_EQ(amd.line_gbps, 448);  // 7 x 64 GB/s per direction
  EXPECT_EQ(amd.nvls_gbps, 0);
  struct Want {
    const char* name;
    double gbps;
    Transport transport;
    int nics;
  };
  const Want wants[] = {
      {"800g-xdr-ib", 100, Transport::rdma, 8}, {"800g-roce", 100, Transport::rdma, 8},
      {"200g-roce", 25, Transport::rdma, 8},    {"100g-efa", 12.5, Transport::rdma, 32},
      {"40gbe", 5, Transport::tcp, 1},          {"50gbe", 6.25, Transport::tcp, 1},
      {"100gbe", 12.5, Transport::tcp, 1},      {"200gbe", 25, Transport::tcp, 1},
  };
  for (const Want& w : wants) {
    const NetworkPreset& n = p.network(w.name, "test");
    EXPECT_DOUBLE_EQ(n.line_gbps, w.gbps) << w.name;
    EXPECT_EQ(n.transport, w.transport) << w.name;
    EXPECT_EQ(n.nics_per_node, w.nics) << w.name;
    EXPECT_FALSE(n.source.empty()) << w.name;
  }
  // p5: 32 x 100G EFA = 3200 Gb/s per node.
  EXPECT_DOUBLE_EQ(resolve_network("32x100g-efa", p).line_gbps, 400);
}

class UserPresets : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_user_presets_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }
  std::string dir_;
};

constexpr const char* kUserFile = R"(gpus:
  - name: h100-sxm
    description: our H100s, power-capped
    arch: hopper
    memory_gib: 80
    bf16_tflops: 700
    fp16_tflops: 700
    interconnect: NVLink 4
    node: nvlink4-8
    source: our own GEMM measurement
networks:
  - name: 300g-ours
    rate: 300 Gb/s
    achievable: 0.9
    transport: rdma
    source: our vendor's quote
)";

TEST_F(UserPresets, AFileAddsOnePresetAndOverridesAnotherSayingSo) {
  const std::string file = write("mine.yaml", kUserFile);
  const Presets p = add_presets(builtin_presets(), file);
  EXPECT_DOUBLE_EQ(p.gpu("h100-sxm", "t").bf16_tflops, 700);                  // overridden
  EXPECT_DOUBLE_EQ(builtin_presets().gpu("h100-sxm", "t").bf16_tflops, 989);  // the built-in set is untouched
  EXPECT_EQ(p.gpus.size(), builtin_presets().gpus.size());
  EXPECT_EQ(p.networks.size(), builtin_presets().networks.size() + 1);  // added
  EXPECT_DOUBLE_EQ(resolve_network("2x300g-ours", p).line_gbps, 75);
  EXPECT_DOUBLE_EQ(p.gpu("b200", "t").bf16_tflops, 2250);  // the rest of the built-in set is kept
  ASSERT_EQ(p.changes.size(), 2u);
  EXPECT_EQ(p.changes[0], file + ": adds network '300g-ours'");
  EXPECT_EQ(p.changes[1], file + ": gpu 'h100-sxm' overrides the built-in preset");
  // A second file over the first names the one it overrides.
  const std::string second = write("second.yaml",
                                   "networks:\n  - {name: 300g-ours, rate: 300G, transport: tcp, "
                                   "source: s}\n");
  const Presets q = add_presets(p, second);
  EXPECT_EQ(q.network("300g-ours", "t").transport, Transport::tcp);
  EXPECT_EQ(q.changes.back(), second + ": network '300g-ours' overrides the one from " + file);
}

// A GPU entry up to its gemm_curve (the cases close the brace).
constexpr const char* kCurveGpu =
    "gpus:\n  - {name: g, arch: hopper, memory_gib: 80, bf16_tflops: 989, fp16_tflops: 989, interconnect: x, "
    "node: nvlink4-8, source: s, ";

TEST_F(UserPresets, BadFilesAreRefusedNamingTheFileEntryAndKey) {
  struct Case {
    std::string text, expect;
  };
  const Case cases[] = {
      {"networks:\n  - {name: x, rate: 100G, transport: rdma, source: s, alpha_us: 1}\n",
       ": networks[0]: unknown key 'alpha_us'"},
      {"networks:\n  - {name: x, rate: 100G, transport: rdma}\n", ": networks[0]: source: missing"},
      {"networks:\n  - {name: x, rate: 100, transport: rdma, source: s}\n", ": networks[0]: rate '100'"},
      {"nodes:\n  - {name: n, gpus: 8, rate: 900, fabric: nvlink, source: s}\n", ": nodes[0]: rate '900'"},
      {"gpus:\n  - {name: g, arch: volta, memory_gib: 16, bf16_tflops: 1, fp16_tflops: 1, interconnect: x, "
       "node: nvlink4-8, source: s}\n",
       ": gpus[0]: arch 'volta': allowed: ampere, ada, hopper, blackwell, cdna3"},
      {"gpus:\n  - {name: g, arch: hopper, memory_gib: 16, bf16_tflops: 1, fp16_tflops: 1, interconnect: x, "
       "node: nowhere, source: s}\n",
       ": gpu 'g': node: no such node preset 'nowhere'"},
      {"gpu:\n  - {name: g}\n", ": unknown key 'gpu'"},
      // Issue 38: a GEMM curve's points ascend, are positive, and cite their source.
      {std::string(kCurveGpu) + "gemm_curve: {bf16: [[4096, 790], [2048, 676]], source: s}}\n",
       ": gpus[0]: gemm_curve: bf16: sizes must ascend (2048 after 4096)"},
      {std::string(kCurveGpu) + "gemm_curve: {bf16: [[2048, 676]], fp16: [[2048, 0]], source: s}}\n",
       ": gpus[0]: gemm_curve: fp16: sizes and TFLOP/s must be positive"},
      {std::string(kCurveGpu) + "gemm_curve: {bf16: [[2048, 676], [4096, 790]]}}\n",
       ": gpus[0]: gemm_curve: source: missing: every curve cites the benchmark"},
      {std::string(kCurveGpu) + "gemm_curve: {bf16: [2048, 676], source: s}}\n",
       ": gpus[0]: gemm_curve: bf16: each point is [size, tflops]"},
      {"{}\n", ": no presets: give any of networks:, nodes:, gpus:"},
  };
  for (const Case& c : cases) {
    const std::string file = write("bad.yaml", c.text);
    const std::string message = refusal([&] { (void)add_presets(builtin_presets(), file); });
    EXPECT_EQ(message.rfind(file, 0), 0u) << "names the file first: " << message;
    EXPECT_NE(message.find(c.expect), std::string::npos) << c.text << " -> " << message;
  }
  EXPECT_NE(refusal([&] { (void)add_presets(builtin_presets(), dir_ + "/absent.yaml"); }).find("absent.yaml"),
            std::string::npos);
}

TEST_F(UserPresets, AQuotesFileNamesItsPresetsRelativeToItself) {
  write("mine.yaml", kUserFile);
  const std::string quotes = write("q.yaml",
                                   "presets: mine.yaml\njob: {tokens: 1B}\nquotes:\n"
                                   "  - {name: ours, gpu: h100-sxm, gpus_per_node: 8, nodes: 2, "
                                   "network: 8x300g-ours, price_per_gpu_hour: 2}\n");
  const QuoteSet set = load_quotes(quotes);
  EXPECT_EQ(set.presets, dir_ + "/mine.yaml");
  const Presets p = add_presets(builtin_presets(), set.presets);
  const auto ranked = evaluate_quotes(set, test::profile_workload("llama-7b-zero1-2x8-h100.yaml"), p, dir_);
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked[0].step.network, "8x300g-ours");
  // Against the built-in set alone the quote's network is unknown.
  EXPECT_NE(refusal([&] {
              (void)evaluate_quotes(set, test::profile_workload("llama-7b-zero1-2x8-h100.yaml"), builtin_presets(),
                                    dir_);
            }).find("no such network preset '300g-ours'"),
            std::string::npos);
}

// Every quotes file shipped in profiles/quotes/ prices on the built-in set
// (each names its workload in its comment: llama-7b-zero1-2x8-h100).
TEST(ShippedQuotes, EveryFilePricesEachQuote) {
  const Workload w = test::profile_workload("llama-7b-zero1-2x8-h100.yaml");
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FB_SOURCE_DIR) + "/profiles/quotes")) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    const QuoteSet set = load_quotes(e.path().string());
    const Presets p = set.presets.empty() ? builtin_presets() : add_presets(builtin_presets(), set.presets);
    const auto ranked = evaluate_quotes(set, w, p, e.path().parent_path().string());
    ASSERT_EQ(ranked.size(), set.quotes.size()) << e.path();
    for (const auto& r : ranked) {
      EXPECT_TRUE(std::isfinite(r.step.step_us) && r.step.step_us > 0) << e.path() << ": " << r.quote.name;
      EXPECT_TRUE(std::isfinite(r.cost) && r.cost > 0) << e.path() << ": " << r.quote.name;
    }
  }
  EXPECT_GE(files, 5u);
}

// The NVL72 quote's four trays sit in one NVLink domain: its collectives
// stay on NVLink, nothing crosses its NICs, and it no longer says it is an
// upper bound. With the domain taken away (the trays as 4-GPU nodes on
// their NICs, as before issue 37's domain) the same quote exposes more.
TEST(ShippedQuotes, TodaysClustersRankBlackwellAheadOfTcpAndPriceTheNvl72DomainOnNvlink) {
  const QuoteSet set = load_quotes(std::string(FB_SOURCE_DIR) + "/profiles/quotes/todays-clusters.yaml");
  const Workload w = test::profile_workload("llama-7b-zero1-2x8-h100.yaml");
  const auto ranked = evaluate_quotes(set, w, builtin_presets(), "");
  ASSERT_EQ(ranked.size(), 4u);
  const auto find = [](const std::vector<QuoteResult>& in, const std::string& name) -> const QuoteResult& {
    for (const auto& r : in)
      if (r.quote.name == name) return r;
    ADD_FAILURE() << name;
    return in.front();
  };
  const QuoteResult& ib = find(ranked, "h100-8x400g-ib");
  const QuoteResult& b200 = find(ranked, "b200-8x800g-xdr");
  const QuoteResult& tcp = find(ranked, "h100-1x100gbe-tcp");
  const QuoteResult& nvl72 = find(ranked, "gb200-nvl72-4-trays");
  // B200's compute is 2250/989 of H100's at the same MFU: a shorter step.
  EXPECT_LT(b200.step.compute_us, ib.step.compute_us * 0.5);
  EXPECT_LT(b200.step.step_us, ib.step.step_us);
  // One 100GbE TCP port per node exposes more communication than 8 x 400G.
  EXPECT_GT(tcp.step.exposed_share, ib.step.exposed_share);
  EXPECT_EQ(nvl72.step.node, "nvl72-tray-4");
  EXPECT_EQ(nvl72.step.network, "4x400g-ndr-ib");
  EXPECT_EQ(nvl72.step.inter_wire_bytes, 0);  // nothing leaves the rack's domain
  EXPECT_GT(b200.step.inter_wire_bytes, 0);   // two HGX nodes meet on their NICs
  for (const auto& i : nvl72.step.items) EXPECT_EQ(i.where, "nvlink-domain") << i.name;
  EXPECT_TRUE(nvl72.step.caveats.empty());
  EXPECT_TRUE(b200.step.caveats.empty());
  const Presets trays = add_presets_text(builtin_presets(),
                                         "nodes:\n  - {name: nvl72-tray-4, gpus: 4, rate: 900 GB/s, achievable: 0.82, "
                                         "fabric: nvlink, source: the trays alone}\n",
                                         "trays.yaml");
  const auto on_nics = evaluate_quotes(set, w, trays, "");
  const QuoteResult& alone = find(on_nics, "gb200-nvl72-4-trays");
  EXPECT_GT(alone.step.exposed_us, nvl72.step.exposed_us);
  EXPECT_GT(alone.step.inter_wire_bytes, 0);
}

TEST(TodaysPresets, AnAmdQuoteIsPricedAndSaysNoBackendMeasuresIt) {
  QuoteSet set = parse_quotes(
      "job: {tokens: 1B}\nquotes:\n"
      "  - {name: amd, gpu: mi300x, gpus_per_node: 8, nodes: 2, network: 8x400g-roce, "
      "price_per_gpu_hour: 2}\n");
  const auto ranked =
      evaluate_quotes(set, test::profile_workload("llama-7b-zero1-2x8-h100.yaml"), builtin_presets(), "");
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_GT(ranked[0].cost, 0);
  ASSERT_EQ(ranked[0].step.caveats.size(), 1u);
  EXPECT_NE(ranked[0].step.caveats[0].find("mi300x is an AMD GPU: no backend of fabricbench measures it yet (RCCL "
                                           "is not supported)"),
            std::string::npos)
      << ranked[0].step.caveats[0];
}

}  // namespace
}  // namespace fb::model
