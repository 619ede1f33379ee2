// Data loading against the step: the needed rate is the batch's bytes over
// the predicted step, the delivered one the storage record's best aggregate
// read at that node count; page-cache rows never count, and node counts the
// record did not measure are not judged.
#include "fabricbench/model/data_loading.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "process.hpp"

namespace fb::model {
namespace {

StorageLine line(const std::string& target, int nodes, double gbps, const std::string& mode = "direct",
                 const std::string& cache = "bypassed", const std::string& pattern = "seq_read") {
  StorageLine l;
  l.target = target;
  l.path = target == "path" ? "/shared/ds" : "/nvme/tmp";
  l.fs_type = target == "path" ? "nfs4" : "ext4";
  l.pattern = pattern;
  l.mode = mode;
  l.cache = cache;
  l.block_bytes = 16ull << 20;
  l.nodes = l.ranks = nodes;
  l.aggregate_gbps = gbps;
  return l;
}

// 256 samples of 600 KB each per step.
Workload images() {
  return parse_workload(R"(
name: vit
model: {params: 86M, forward_flops_per_sample: 17.5G}
training: {global_batch: 256, micro_batch: 16}
compute: {tflops: 100}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
data: {bytes_per_sample: 600K}
)");
}

ScalePoint point(int nodes, double step_us) {
  ScalePoint p;
  p.nodes = nodes;
  p.step.step_us = step_us;
  return p;
}

TEST(DataLoading, NeededRateIsTheBatchOverTheStepAndTheSharedFigureJudgesIt) {
  const Workload w = images();
  EXPECT_DOUBLE_EQ(w.data.bytes_per_sample, 600 * 1024);
  // 1 node: a 200 ms step needs 0.786 GB/s; 8 nodes: a 64 ms step needs 2.46 GB/s.
  const std::vector<StorageLine> record = {line("path", 1, 0.9), line("path", 8, 1.1), line("path", 8, 0.7, "buffered"),
                                           line("local", 8, 6.2)};
  const auto points = data_loading(w, {point(1, 200e3), point(8, 64e3)}, record);
  ASSERT_EQ(points.size(), 2u);
  const double bytes = 256.0 * 600 * 1024;
  EXPECT_DOUBLE_EQ(points[0].bytes_per_step, bytes);
  EXPECT_NEAR(points[0].needed_gbps, bytes / 0.2 / 1e9, 1e-12);
  EXPECT_TRUE(points[0].keeps_up) << points[0].advice;
  EXPECT_NE(points[0].advice.find("it keeps up"), std::string::npos) << points[0].advice;
  EXPECT_EQ(points[0].advice.rfind("at 1 node the shared filesystem delivers 0.9 GB/s", 0), 0u) << points[0].advice;
  EXPECT_NEAR(points[1].needed_gbps, bytes / 0.064 / 1e9, 1e-12);
  ASSERT_TRUE(points[1].shared);
  EXPECT_DOUBLE_EQ(points[1].shared->gbps, 1.1);  // the best of the two modes
  EXPECT_FALSE(points[1].keeps_up);
  EXPECT_EQ(points[1].advice,
            "at 8 nodes the shared filesystem delivers 1.1 GB/s against 2.46 GB/s needed: cache the dataset locally "
            "(the local disks read 6.2 GB/s)");
}

TEST(DataLoading, LocalDisksShortTooAndNoLocalFigureSaySo) {
  const Workload w = images();
  const auto both_short = data_loading(w, {point(8, 64e3)}, {line("path", 8, 1.1), line("local", 8, 2.0)});
  EXPECT_NE(both_short[0].advice.find("the local disks read 2 GB/s, short too"), std::string::npos)
      << both_short[0].advice;
  const auto no_local = data_loading(w, {point(8, 64e3)}, {line("path", 8, 1.1)});
  EXPECT_NE(no_local[0].advice.find("measure the local disks with --local"), std::string::npos) << no_local[0].advice;
}

TEST(DataLoading, PageCacheRowsAndUnmeasuredCountsAreNotJudged) {
  const Workload w = images();
  // The 8-node row is tmpfs-fast because it is RAM: it must not say "keeps up".
  const auto points =
      data_loading(w, {point(1, 200e3), point(8, 64e3), point(2, 1e5)},
                   {line("path", 1, 0.9), line("path", 8, 40, "buffered", "cached")});
  EXPECT_TRUE(points[1].why.find("storage not measured at 8 nodes (measured at 1)") != std::string::npos)
      << points[1].why;
  EXPECT_FALSE(points[1].keeps_up);
  EXPECT_NE(points[2].why.find("not measured at 2 nodes"), std::string::npos);
  ScalePoint unpredicted;
  unpredicted.nodes = 3;
  unpredicted.why = "global_batch 256 is not a multiple of dp 24";
  EXPECT_EQ(data_loading(w, {unpredicted}, {line("path", 1, 0.9)})[0].why, unpredicted.why);
  // Only page-cache or other-pattern rows: nothing to compare with.
  EXPECT_THROW(data_loading(w, {point(1, 1e5)}, {line("path", 1, 40, "buffered", "cached")}), UsageError);
  EXPECT_THROW(data_loading(w, {point(1, 1e5)}, {line("path", 1, 1, "direct", "bypassed", "small_read")}), UsageError);
}

TEST(DataLoading, TheWorkloadStatesItsBytesPerSampleOrPerToken) {
  const char* llm = R"(
model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}
training: {global_batch: 256, micro_batch: 2}
compute: {mfu: 40%}
cluster: {gpu: h100-sxm, nodes: 2, gpus_per_node: 8, network: 8x400g-ndr-ib}
)";
  const Workload tokens = parse_workload(std::string(llm) + "data: {bytes_per_token: 2, pattern: small_read}\n");
  EXPECT_DOUBLE_EQ(tokens.data.bytes_per_sample, 2.0 * 4096);
  EXPECT_EQ(tokens.data.pattern, "small_read");
  EXPECT_FALSE(parse_workload(llm).data.given());
  EXPECT_THROW(data_loading(parse_workload(llm), {point(1, 1e5)}, {line("path", 1, 1)}), UsageError);
  for (const char* bad : {"data: {}\n", "data: {bytes_per_sample: 1K, bytes_per_token: 2}\n",
                          "data: {bytes_per_token: 0}\n", "data: {bytes_per_sample: 1K, pattern: random}\n",
                          "data: {bytes_per_sample: 1K, files: 3}\n"})
    EXPECT_THROW(parse_workload(std::string(llm) + bad), UsageError) << bad;
}

// The command end to end: the step predicted on the workload's network at
// each node count the record measured.
TEST(DataLoading, ModelDataReadsAStorageRecord) {
  const std::string dir = test::make_temp_dir("fb_model_data_");
  const std::string record = dir + "/storage.jsonl";
  {
    RecordWriter out;
    ASSERT_EQ(out.open(record, false), "");
    RunHeader h;
    h.command = "storage";
    h.run_id = "r";
    out.write(h);
    for (int n : {1, 2}) out.write(line("path", n, 0.001));  // 1 MB/s: a 2-node job starves
    Summary s;
    ASSERT_TRUE(out.seal(s));
  }
  std::ofstream(dir + "/w.yaml") << R"(
name: vit
model: {params: 86M, forward_flops_per_sample: 17.5G}
training: {global_batch: 256, micro_batch: 16}
compute: {tflops: 100}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8, network: 8x400g-ndr-ib}
data: {bytes_per_sample: 600K}
)";
  const auto r = test::run_process(std::string(FB_BINARY) + " model data -w " + dir + "/w.yaml --storage " + record +
                                   " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["data_loading"].size(), 2u);
  EXPECT_EQ(j["data_loading"][1]["nodes"], 2);
  EXPECT_FALSE(j["data_loading"][1]["keeps_up"].get<bool>());
  EXPECT_GT(j["data_loading"][1]["needed_gbps"].get<double>(), j["data_loading"][0]["needed_gbps"].get<double>());
  const auto text = test::run_process(std::string(FB_BINARY) + " model data -w " + dir + "/w.yaml --storage " +
                                      record);
  EXPECT_NE(text.out.find("at 2 nodes the shared filesystem delivers 0.001 GB/s against"), std::string::npos)
      << text.out;
  const auto bad = test::run_process(std::string(FB_BINARY) + " model data -w " + dir + "/w.yaml --storage " + dir +
                                     "/w.yaml");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fb::model
