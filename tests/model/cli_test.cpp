// `fabricbench model` and `fabricbench report` end to end, run alone (no
// mpirun): outputs in each format and exit code 2 with a message naming the
// input for bad input.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include "model_rows.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::run_process;

// One CSV line's fields (quoted fields may hold commas).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

// The values of the column `key` in CSV output, one per row.
std::vector<std::string> csv_column(const std::string& csv, const std::string& key) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  const auto head = csv_fields(line);
  const auto at = std::find(head.begin(), head.end(), key);
  EXPECT_NE(at, head.end()) << key << " in " << line;
  std::vector<std::string> out;
  if (at == head.end()) return out;
  while (std::getline(in, line) && !line.empty() && line[0] != '#')
    out.push_back(csv_fields(line).at(static_cast<std::size_t>(at - head.begin())));
  return out;
}

class ModelCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_model_cli_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string fb(const std::string& args) { return std::string(FB_BINARY) + " " + args; }
  static std::string profile(const std::string& name) { return std::string(FB_SOURCE_DIR) + "/profiles/" + name; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  static std::string with_text(const std::string& file, const std::string& from, const std::string& to) {
    std::string text = test::read_text(file);
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
  }
  std::string dir_;
};

TEST_F(ModelCli, FitPrintsAlphaBetaInEveryFormat) {
  const std::string r = path("r.jsonl");
  test::write_results(r, test::alpha_beta_rows("all_reduce", "global", 2, 12.0, 4.0, 0.0));
  const auto text = run_process(fb("model fit " + r));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("alpha (us)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("beta (GB/s)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("12.00"), std::string::npos) << text.out;
  const auto js = run_process(fb("model fit --format json " + r));
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_NEAR(j["curves"][0]["beta_gbps"].get<double>(), 4.0, 1e-6);
  EXPECT_EQ(j["curves"][0]["points"].size(), 24u);
  const auto csv = run_process(fb("model fit " + r + " --format csv"));
  EXPECT_EQ(csv.out.rfind("op,scope,dtype,ranks", 0), 0u) << csv.out;
  // A column named in bytes holds whole bytes, as the JSON does ("48 KiB" was text in a figure's column).
  const auto n_half = csv_column(csv.out, "n_half_bytes");
  ASSERT_EQ(n_half.size(), 1u) << csv.out;
  EXPECT_EQ(n_half[0], std::to_string(std::llround(j["curves"][0]["n_half_bytes"].get<double>()))) << csv.out;
}

TEST_F(ModelCli, AStepsCollectivesGiveTheirBytesPerCallInBytes) {
  const std::string w = profile("workloads/llama-7b-zero1-2x8-h100.yaml");
  const auto csv = run_process(fb("model step --format csv --network 1x10gbe -w " + w));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto js = run_process(fb("model step --format json --network 1x10gbe -w " + w));
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const auto items = nlohmann::json::parse(js.out)["networks"][0]["items"];
  const auto bytes = csv_column(csv.out, "bytes_per_call");
  ASSERT_EQ(bytes.size(), items.size()) << csv.out;
  ASSERT_FALSE(bytes.empty());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    EXPECT_EQ(bytes[i], std::to_string(std::llround(items[i]["bytes_per_call"].get<double>()))) << csv.out;
}

TEST_F(ModelCli, StepComparesNetworksAndSaysWhatBringsTheExposedShareUnderTheTarget) {
  const auto r = run_process(fb("model step -w " + profile("workloads/llama-7b-zero1-2x8-h100.yaml") +
                                " --network 1x10gbe --network 8x400g-ndr-ib"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1x10gbe"), std::string::npos);
  EXPECT_NE(r.out.find("8x400g-ndr-ib"), std::string::npos);
  EXPECT_NE(r.out.find("at most 5% needs >= "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB/s per node achievable with this workload's overlap windows; 1x10gbe gives 10 Gbit/s line rate (1.06 "
                       "GB/s achievable)"),
            std::string::npos)
      << r.out;
  // Every assumption that moves the answer is printed, the NIC counts too.
  for (const char* words : {"assumption: collectives: NCCL's tuner model", "assumption: compute: MFU 40.0%",
                            "assumption: overlap: grad_reduce 1", "assumption: buckets:",
                            "assumption (8x400g-ndr-ib): network: 8x400g-ndr-ib: 8 NICs x 50 GB/s",
                            "assumption (1x10gbe): network: 1x10gbe: 1 NIC x 1.25 GB/s"})
    EXPECT_NE(r.out.find(words), std::string::npos) << words << "\n" << r.out;
  const auto one = run_process(fb("model step -w " + profile("workloads/llama-70b-3d-16x8-h100.yaml") +
                                  " --format json --exposed-target 20%"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto j = nlohmann::json::parse(one.out);
  EXPECT_EQ(j["networks"][0]["network"], "8x400g-ndr-ib");  // the workload's own
  // A link rate in Gbit/s under a _gbit key, as the text and CSV columns give it.
  EXPECT_DOUBLE_EQ(j["networks"][0]["network_line_gbit"].get<double>(), 3200.0) << j["networks"][0].dump();
  EXPECT_EQ(j["networks"][0]["items"].size(), 5u);          // TP, two ZeRO-1, PP send and its all-gather
  EXPECT_DOUBLE_EQ(j["networks"][0]["exposed_target"].get<double>(), 0.2);
  EXPECT_FALSE(j["networks"][0]["assumptions"].empty());
  for (const auto& item : j["networks"][0]["items"]) {
    EXPECT_FALSE(item["algorithm"].get<std::string>().empty()) << item;
    EXPECT_FALSE(item["formula"].get<std::string>().empty()) << item;
  }
}

// Issue 35: `bucket: 0` was priced without a word; it means no buckets, the
// whole gradient in one call per pass, and the step says so.
TEST_F(ModelCli, BucketZeroMeansOneCallForTheWholeGradientAndSaysSo) {
  const std::string w = profile("workloads/llama-7b-zero1-2x8-h100.yaml");
  const auto r = run_process(fb("model step -w " + write("nobucket.yaml", with_text(w, "bucket: 25M", "bucket: 0")) +
                                " --network 1x10gbe"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("assumption: buckets: none (bucket 0): the whole gradient in one reduce-scatter per pass "
                       "(ZeRO-1)"),
            std::string::npos)
      << r.out;
}

TEST_F(ModelCli, ScaleMemoryQuotesAndPresets) {
  const std::string w = profile("workloads/llama-7b-zero1-2x8-h100.yaml");
  const auto scale = run_process(fb("model scale -w " + w + " --network 8x400g-ndr-ib --nodes 1,2,4,3 --format csv"));
  ASSERT_EQ(scale.exit_code, 0) << scale.err;
  EXPECT_EQ(std::count(scale.out.begin(), scale.out.end(), '\n'), 4) << scale.out;  // header + 1, 2, 4 (3 cannot)
  const auto memory = run_process(fb("model memory -w " + w + " --gpu rtx-4090"));
  ASSERT_EQ(memory.exit_code, 0) << memory.err;
  EXPECT_NE(memory.out.find("1 (workload)"), std::string::npos) << memory.out;
  const auto quotes = run_process(fb("model quotes -w " + w + " -q " + profile("quotes/a100-10gbe-vs-hdr.yaml")));
  ASSERT_EQ(quotes.exit_code, 0) << quotes.err;
  EXPECT_NE(quotes.out.find(" wins: USD "), std::string::npos) << quotes.out;
  const auto presets = run_process(fb("model presets --format json"));
  ASSERT_EQ(presets.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(presets.out)["gpus"].size(), 15u);
}

// Issue 37: today's clusters priced side by side, one of them on AMD GPUs
// that no backend measures (the output says so).
TEST_F(ModelCli, TodaysClustersArePricedAndAnAmdGpuSaysNothingMeasuresIt) {
  const std::string w = profile("workloads/llama-7b-zero1-2x8-h100.yaml");
  const auto r = run_process(fb("model quotes -w " + w + " -q " + profile("quotes/todays-clusters.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"h100-8x400g-ib", "b200-8x800g-xdr", "h100-1x100gbe-tcp", "gb200-nvl72-4-trays"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
  EXPECT_NE(r.out.find(" wins: USD "), std::string::npos) << r.out;
  // The NVL72 quote's trays are one NVLink domain, said beside its step.
  EXPECT_NE(r.out.find("assumption (gb200-nvl72-4-trays): NVLink domain: nvl72-tray-4 joins up to 72 GPUs (18 hosts "
                       "of 4); here 1 domain of 4 hosts (16 GPUs)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("upper bound"), std::string::npos) << r.out;
  const auto amd = run_process(fb("model quotes -w " + w + " -q " +
                                  write("amd.yaml",
                                        "job: {tokens: 1B}\nquotes:\n  - {name: amd, gpu: mi325x, "
                                        "gpus_per_node: 8, nodes: 2, network: 8x400g-roce, "
                                        "price_per_gpu_hour: 2}\n")));
  ASSERT_EQ(amd.exit_code, 0) << amd.err;
  EXPECT_NE(amd.out.find("caveat: mi325x is an AMD GPU: no backend of fabricbench measures it yet (RCCL is not "
                         "supported)"),
            std::string::npos)
      << amd.out;
  const auto presets = run_process(fb("model presets"));
  ASSERT_EQ(presets.exit_code, 0) << presets.err;
  EXPECT_NE(presets.out.find("caveat: mi300x is an AMD GPU"), std::string::npos) << presets.out;
}

// --presets-add FILE lays a user's presets over the built-in set, saying what
// it overrides; a quotes file's presets: does the same; a bad file is refused
// naming the file and the key.
TEST_F(ModelCli, PresetsAddOverridesOneAndSaysSoAndRefusesABadFile) {
  const std::string mine = write("mine.yaml",
                                 "gpus:\n  - {name: h100-sxm, arch: hopper, memory_gib: 80, bf16_tflops: "
                                 "700, fp16_tflops: 700, interconnect: NVLink 4, node: nvlink4-8, "
                                 "source: our GEMM}\n");
  const auto r = run_process(fb("model presets --format json --presets-add " + mine));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("fabricbench model: presets: " + mine + ": gpu 'h100-sxm' overrides the built-in preset"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"].size(), 15u);
  for (const auto& g : j["gpus"]) {
    if (g["name"] == "h100-sxm") {
      EXPECT_DOUBLE_EQ(g["bf16_tflops"].get<double>(), 700);
    }
  }
  // The quotes file names the same file (relative to itself): the quote is priced on 700 TFLOP/s.
  const std::string w = profile("workloads/llama-7b-zero1-2x8-h100.yaml");
  const std::string q = write("q.yaml",
                              "presets: mine.yaml\njob: {tokens: 1B}\nquotes:\n  - {name: ours, gpu: "
                              "h100-sxm, gpus_per_node: 8, nodes: 2, network: 8x400g-ndr-ib, "
                              "price_per_gpu_hour: 2}\n");
  const auto quoted = run_process(fb("model quotes -w " + w + " -q " + q));
  ASSERT_EQ(quoted.exit_code, 0) << quoted.err;
  EXPECT_NE(quoted.out.find("h100-sxm's 700 TFLOP/s"), std::string::npos) << quoted.out;
  EXPECT_NE(quoted.err.find("overrides the built-in preset"), std::string::npos) << quoted.err;
  const std::string bad = write("bad.yaml", "networks:\n  - {name: x, rate: 100, transport: rdma, source: s}\n");
  const auto refused = run_process(
      fb("model quotes -w " + w + " -q " + profile("quotes/todays-clusters.yaml") + " --presets-add " + bad));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find(bad + ": networks[0]: rate '100'"), std::string::npos) << refused.err;
  // Issue 38: a file may carry a GEMM curve; one out of order is refused naming the key, exit 2, and a good
  // one prices a workload that asks for the preset curve, which `model step` names as its compute source.
  const std::string gpu =
      "gpus:\n  - {name: ours, arch: hopper, memory_gib: 80, bf16_tflops: 989, fp16_tflops: "
      "989, interconnect: x, node: nvlink4-8, source: s, gemm_curve: {bf16: ";
  const std::string unsorted = write("unsorted.yaml", gpu + "[[4096, 700], [1024, 150]], source: ours}}\n");
  const auto refused_curve = run_process(fb("model step -w " + w + " --presets-add " + unsorted));
  EXPECT_EQ(refused_curve.exit_code, 2);
  EXPECT_NE(refused_curve.err.find(unsorted + ": gpus[0]: gemm_curve: bf16: sizes must ascend"), std::string::npos)
      << refused_curve.err;
  const std::string curve = write("curve.yaml", gpu + "[[1024, 150], [4096, 700]], source: ours}}\n");
  const std::string on_preset = write("preset.yaml",
                                      "model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
                                      "training: {global_batch: 64, micro_batch: 2}\n"
                                      "compute: {gemm_curve: preset, of_gemm: 0.5}\n"
                                      "cluster: {gpu: ours, nodes: 1, gpus_per_node: 8}\n");
  const auto stepped = run_process(fb("model step --format json -w " + on_preset + " --presets-add " + curve));
  ASSERT_EQ(stepped.exit_code, 0) << stepped.err;
  const auto step = nlohmann::json::parse(stepped.out)["networks"][0];
  EXPECT_EQ(step["compute_source"], "preset_curve");
  EXPECT_DOUBLE_EQ(step["rate_tflops"].get<double>(), 0.5 * 700) << "every product is past the curve's last point";
  // `model presets` lists the curve and its source.
  const auto listed = run_process(fb("model presets --format json --presets-add " + curve));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const auto presets = nlohmann::json::parse(listed.out);  // kept: a range-for over a temporary's member dangles
  for (const auto& g : presets["gpus"]) {
    if (g["name"] == "ours") {
      EXPECT_EQ(g["gemm_curve"]["source"], "ours");
      EXPECT_DOUBLE_EQ(g["gemm_curve"]["bf16"][1][1].get<double>(), 700);
    } else if (g["name"] == "b200") {
      EXPECT_TRUE(g["gemm_curve"].is_null());
      EXPECT_TRUE(g["attention_curve"].is_null());
    } else if (g["name"] == "h100-sxm") {
      EXPECT_EQ(g["attention_curve"]["head_dim"], 128);
      EXPECT_DOUBLE_EQ(g["attention_curve"]["forward_causal"][3][1].get<double>(), 319);
    }
  }
}

TEST_F(ModelCli, BadInputExitsTwoNamingTheInput) {
  const std::string w = profile("workloads/llama-7b-zero1-2x8-h100.yaml");
  const std::string one_node = path("one_node.jsonl");
  test::write_results(one_node, test::alpha_beta_rows("all_reduce", "global", 2, 1.0, 3.0, 0.0));
  const std::string bad_workload = write("bad.yaml", "model: {params: 7B, layres: 32}\n");
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"model step -w " + w + " --network 4x800g", "network '4x800g': no such network preset"},
      {"model step -w " + w + " --network " + one_node, "has no inter-node rows"},
      {"model step -w " + path("absent.yaml"), "absent.yaml': cannot read it: No such file"},
      {"model step -w " + bad_workload + " --network 1x10gbe", "bad.yaml: workload: model: unknown key 'layres'"},
      {"model step -w " + w, "2 nodes need a network"},
      {"model step -w " + w + " --network 1x10gbe --format xml", "--format 'xml': allowed: text, json, csv"},
      {"model fit " + path("absent.jsonl"), "absent.jsonl"},
      {"model quotes -w " + w + " -q " + write("q.yaml", "quotes: []\n"), "the list is empty"},
      {"model nonsense", "nonsense"},
      {"report compare " + one_node, "b is required"},
      // Issue 17: each crashed, hung or printed inf before.
      {"model scale -w " + w + " --network 8x400g-ndr-ib --nodes 0", "--nodes '0': node counts are whole numbers"},
      {"model scale -w " + w + " --network 8x400g-ndr-ib --nodes 2,-1", "--nodes '-1'"},
      // Issue 35: a table of reasons without a figure ended with exit 0.
      {"model scale -w " + w + " --network 8x400g-ndr-ib --nodes 3",
       "--nodes: no node count given can run this workload (training: global_batch 256 is not a multiple of dp 24"},
      {"model fit /dev/zero", "results file '/dev/zero': not a regular file"},
      {"model step -w /dev/zero", "workload file '/dev/zero': not a regular file"},
      {"model step -w " + w + " --network 400g-ndr-ib", "say how many NICs each node has, e.g. 1x400g-ndr-ib"},
      {"model step -w " + w + " --network 8x400g-ndr-ib --exposed-target 0", "--exposed-target '0'"},
      {"model step -w " + write("dup.yaml", with_text(w, "global_batch: 256", "global_batch: 256\n  global_batch: 512")),
       "dup.yaml: workload: training: key 'global_batch' is given twice"},
      {"model step -w " + write("two.yaml", test::read_text(w) + "---\n" + test::read_text(w)),
       "two.yaml: workload: more than one YAML document"},
      {"model step -w " + write("huge.yaml", with_text(w, "params: 6.7B", "params: 1e308")),
       "huge.yaml: workload: model: params '1e308': too large"},
      {"model quotes -w " + w + " -q " +
           write("price.yaml", "job: {tokens: 1B}\nquotes:\n  - {name: a, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, "
                               "network: 8x200g-hdr-ib, price_per_gpu_hour: 1e308}\n"),
       "price.yaml: quote 'a': price_per_gpu_hour '1e308': too large"},
      {"model step -w " + w + " --network 8x400g-ndr-ib --measured-step-s 0", "--measured-step-s 0: a step time"},
      {"model step -w " + w + " --network 8x400g-ndr-ib --measured-step-s 9 --busbw-group ep",
       "busbw share of 'ep': the groups are tp, dp and pp"},
      {"model step -w " + w + " --network 8x400g-ndr-ib --network 1x10gbe --measured-step-s 9",
       "--measured-step-s: give one --network"},
  };
  for (const auto& c : cases) {
    const auto r = run_process(fb(c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
  }
}

// A framework's measured step gives the share of NCCL's bus bandwidth its
// collectives reach; the workload stating that share then predicts that
// step. A step faster than the model at NCCL's own bandwidth has no share.
TEST_F(ModelCli, AMeasuredStepGivesTheFrameworksBusbwShareThatPricesIt) {
  const std::string w = profile("workloads/zero3-10b-2x8-a100.yaml");
  const auto step_s = [&](const std::string& workload, const std::string& more) {
    const auto r = run_process(fb("model step --format json --network 8x200g-hdr-ib -w " + workload + more));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const double nccl = step_s(w, "")["networks"][0]["step_us"].get<double>() / 1e6;
  const auto fit = step_s(w, fmt::format(" --measured-step-s {}", 1.5 * nccl))["busbw_share_fit"];
  ASSERT_TRUE(fit["busbw_share"].is_number()) << fit.dump();
  const double share = fit["busbw_share"].get<double>();
  EXPECT_GT(share, 0.0);
  EXPECT_LT(share, 1.0);
  EXPECT_EQ(fit["group"], "dp");
  const std::string priced = write("priced.yaml", test::read_text(w) + fmt::format("busbw_share: {{dp: {}}}\n", share));
  EXPECT_NEAR(step_s(priced, "")["networks"][0]["step_us"].get<double>() / 1e6, 1.5 * nccl, 1e-4 * nccl);
  const auto faster = step_s(w, fmt::format(" --measured-step-s {}", 0.5 * nccl))["busbw_share_fit"];
  EXPECT_TRUE(faster["busbw_share"].is_null()) << faster.dump();
  EXPECT_NE(faster["why"].get<std::string>().find("faster than the model"), std::string::npos) << faster.dump();
  const auto text = run_process(fb(fmt::format("model step --network 8x200g-hdr-ib -w {} --measured-step-s {}", w,
                                               1.5 * nccl)));
  EXPECT_NE(text.out.find("collectives reach"), std::string::npos) << text.out;
}

// A FIFO is not a results file: refused at once, not read until a writer comes.
TEST_F(ModelCli, FitRefusesAFifoWithoutWaiting) {
  const std::string fifo = path("fifo.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = run_process("timeout 20 " + fb("model fit " + fifo));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

TEST_F(ModelCli, ReportCompareFlagsRowsBeyondTheirSpread) {
  const std::string a = path("a.jsonl"), b = path("b.jsonl");
  test::write_results(a, {test::model_row("all_reduce", "global", 2, 1024, 10.0, 0.1)});
  test::write_results(b, {test::model_row("all_reduce", "global", 2, 1024, 20.0, 0.1)});
  const auto r = run_process(fb("report compare " + a + " " + b));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("slower"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.000"), std::string::npos) << r.out;
  EXPECT_EQ(run_process(fb("report compare --fail-on-difference " + a + " " + b)).exit_code, 1);
  EXPECT_EQ(run_process(fb("report compare --fail-on-difference " + b + " " + a)).exit_code, 0);  // faster
  const auto j = nlohmann::json::parse(run_process(fb("report compare --format json " + a + " " + b)).out);
  EXPECT_EQ(j["slower"], 1);
  EXPECT_DOUBLE_EQ(j["rows"][0]["b_over_a"].get<double>(), 2.0);
}

// Issue 38: a workload priced from a GEMM curve shows its non-GEMM work
// apart from its products in every output of step, scale and quotes.
TEST_F(ModelCli, StepScaleAndQuotesShowTheNonGemmWorkBesideTheProducts) {
  const std::string w = write("w.yaml",
                              "model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
                              "training: {global_batch: 64, micro_batch: 2}\n"
                              "compute: {gemm_curve: preset, of_gemm: 0.6}\n"
                              "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n");
  const auto text = run_process(fb("model step -w " + w));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("= compute 3.150 + non-GEMM work 0.168 (optimizer 0.060) +"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("non-GEMM work: 563.1 GB per GPU per step at h100-sxm's 3.35 TB/s"), std::string::npos)
      << text.out;
  // Two networks give the table of steps, a column beside compute.
  const std::string networks = " --network 1x10gbe --network 8x400g-ndr-ib";
  const auto table = run_process(fb("model step -w " + w + networks));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("compute (s)  non_gemm (s)"), std::string::npos) << table.out;
  const auto csv = run_process(fb("model step --format csv -w " + w + networks));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",compute_s,non_gemm_s,exposed_s,"), std::string::npos) << csv.out;
  const auto js = run_process(fb("model step --format json -w " + w));
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const auto step = nlohmann::json::parse(js.out)["networks"][0];
  // 5.63119e11 bytes at 3.35 TB/s (tests/model/non_gemm_test.cpp works it by hand).
  EXPECT_NEAR(step["non_gemm_us"].get<double>(), 168095.35, 0.01);
  EXPECT_NEAR(step["optimizer_us"].get<double>(), 60000.0, 0.01);
  EXPECT_GT(step["compute_us"].get<double>(), 0);
  const auto scaled = run_process(fb("model scale --format csv --nodes 1 -w " + w));
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  EXPECT_NE(scaled.out.find(",step_s,non_gemm_s,"), std::string::npos) << scaled.out;
  EXPECT_NE(scaled.out.find(",0.168,"), std::string::npos) << "168.1 ms of non-GEMM work\n" << scaled.out;
  const std::string q = write("q.yaml",
                              "currency: USD\njob: {tokens: 1B}\nquotes:\n"
                              "  - {name: h100, gpu: h100-sxm, gpus_per_node: 8, nodes: 1, price_per_gpu_hour: 2}\n");
  const auto quoted = run_process(fb("model quotes --format json -w " + w + " -q " + q));
  ASSERT_EQ(quoted.exit_code, 0) << quoted.err;
  const auto quote = nlohmann::json::parse(quoted.out)["quotes"][0];
  EXPECT_NEAR(quote["step"]["non_gemm_us"].get<double>(), 168095.35, 0.01);
  EXPECT_GT(quote["hours_split"]["non_gemm"].get<double>(), 0);
}

}  // namespace
}  // namespace fb
