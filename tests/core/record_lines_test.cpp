// The record's typed lines against the schema document: each struct writes
// exactly the keys its table in docs/results-schema.md lists (the tables
// marked `<!-- keys: NAME -->`), reads back what it wrote, and every record
// shipped in the repository still reads.
#include "fabricbench/core/record_lines.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <set>
#include <string>
#include <tuple>

#include "fabricbench/core/record.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using json = nlohmann::ordered_json;
using Keys = std::set<std::string>;

// Every key table of the schema document, by the name in its marker: the
// backticked names in the first cell of each row.
std::map<std::string, Keys> doc_tables() {
  std::ifstream in(std::string(FB_SOURCE_DIR) + "/docs/results-schema.md");
  std::map<std::string, Keys> out;
  const std::regex marker(R"(<!-- keys: ([a-z_.]+) -->)");
  const std::regex name("`([a-z_0-9]+)`");
  std::string current;
  int row = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, marker)) {
      current = m[1];
      out[current];
      row = 0;
      continue;
    }
    if (current.empty()) continue;
    if (line.empty() || line[0] != '|') {
      if (row > 0) current.clear();  // the table ended
      continue;
    }
    if (++row <= 2) continue;  // the header and the |---| line
    const std::string first = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator it(first.begin(), first.end(), name), end; it != end; ++it) out[current].insert((*it)[1]);
  }
  return out;
}

Keys keys_of(const json& j) {
  Keys k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  k.erase("type");
  return k;
}

Keys minus(Keys a, const Keys& b) {
  for (const auto& k : b) a.erase(k);
  return a;
}

class RecordLines : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tables_ = doc_tables(); }
  static const Keys& doc(const std::string& table) {
    const auto it = tables_.find(table);
    if (it == tables_.end() || it->second.empty()) throw std::runtime_error("no key table '" + table + "' in the doc");
    return it->second;
  }
  static inline std::map<std::string, Keys> tables_;
};

Measurement full_measurement() {
  Measurement m;
  m.run_id = "20261201T000000Z-0123456789abcdef";
  m.op = "pingpong";
  m.backend = "mpi";
  m.scope = "global";
  m.path = "shm";
  m.dtype = "float";
  m.nranks = 2;
  m.bytes = 8;
  m.count = 2;
  m.peer_a = 0;
  m.peer_b = 1;
  m.time = {20, 1, 2, 3, 4, 5, 6, 1.5, 2.5, 2};
  m.stopped_by = "ci";
  m.wrong = 3;
  m.wrong_ranks = {1};
  m.wrong_at = {{1, 2, 3}};
  m.pass = 2;
  m.rank_mean_us = {1.5, 2.5};
  m.modes = TwoModes{100, 400, 0.75, 30, 0.9};
  return m;
}

TEST_F(RecordLines, TheDocumentHasEveryTable) {
  for (const char* t : {"run",
                        "inventory",
                        "inventory.paths",
                        "measurement",
                        "skip",
                        "check",
                        "check.row",
                        "summary",
                        "summary.sweep",
                        "summary.topo",
                        "summary.pairs",
                        "summary.gemm",
                        "pair",
                        "node",
                        "finding",
                        "gemm",
                        "step",
                        "step_model",
                        "storage",
                        "diagnosis",
                        "diagnosis.gpu_figures",
                        "diagnosis.node_figures",
                        "counters"})
    EXPECT_NO_THROW(doc(t)) << t;
}

TEST_F(RecordLines, HeaderWritesTheDocumentedKeys) {
  RunHeader h;
  h.backend = "mpi";
  h.backend_version = "Open MPI 4.1";
  h.options = json{{"iters", 20}};
  h.profile = ProfileRef{"p", "p.yaml", "here"};
  h.sweeps = std::vector<SweepRef>{{"s", json{{"iters", 5}}}};
  h.pairs = PairsPlanRef{1 << 20, 5, 0, false};
  h.build = BuildRef{"0.1.0", "0123456789ab", true, "Release", "GNU 12.2.0", "Open MPI v4.1.4", "13.0.88", "2.28.9"};
  h.simulated = true;
  h.counters = "off";
  h.mpi_thread_level = "MPI_THREAD_SINGLE";
  EXPECT_EQ(keys_of(to_json(h)), doc("run"));
  EXPECT_EQ(header_from_json(to_json(h)).mpi_thread_level, "MPI_THREAD_SINGLE");
  EXPECT_FALSE(header_from_json(to_json(RunHeader{})).mpi_thread_level) << "absent: not said (before 1.19)";
  EXPECT_EQ(header_from_json(to_json(h)).counters, "off");
  EXPECT_FALSE(header_from_json(to_json(RunHeader{})).counters) << "absent: not said (before 1.12, or topo)";
  EXPECT_TRUE(header_from_json(to_json(h)).simulated);
  EXPECT_FALSE(header_from_json(to_json(RunHeader{})).simulated) << "absent reads as a measurement";
  // The build identity reads back whole (records before 1.4 have none).
  const RunHeader back = header_from_json(to_json(h));
  ASSERT_TRUE(back.build);
  EXPECT_EQ(back.build->git_commit, "0123456789ab");
  EXPECT_TRUE(back.build->git_dirty);
  EXPECT_EQ(back.build->nccl_built, "2.28.9");
  EXPECT_FALSE(header_from_json(to_json(RunHeader{})).build);
  // Without the optional parts (a topo record): a subset, never a stray key.
  const Keys bare = keys_of(to_json(RunHeader{}));
  EXPECT_EQ(minus(bare, doc("run")), Keys{});
  EXPECT_EQ(minus(doc("run"), bare), (Keys{"backend", "backend_version", "build", "options", "profile", "sweeps",
                                           "pairs", "simulated", "counters", "mpi_thread_level"}));
}

TEST_F(RecordLines, MeasurementWritesTheDocumentedKeys) {
  EXPECT_EQ(keys_of(to_json(full_measurement())), doc("measurement"));
  const Keys plain = keys_of(to_json(Measurement{}));
  EXPECT_EQ(minus(doc("measurement"), plain),
            (Keys{"time_ci_low_us", "time_ci_high_us", "time_samples", "stopped_by", "peer_a", "peer_b", "wrong_ranks",
                  "wrong_at", "pass", "rank_mean_us", "modes"}));
}

TEST_F(RecordLines, SkipCheckAndRowWriteTheDocumentedKeys) {
  EXPECT_EQ(keys_of(to_json(Skip{"all_reduce", "inter", 0, false, "one node"})), doc("skip"));
  CheckLine c;
  c.row = CheckRow{"pingpong", "global", 8, false, "float", "shm", 2, std::pair{0, 1}};
  const json j = to_json(c);
  EXPECT_EQ(keys_of(j), doc("check"));
  EXPECT_EQ(keys_of(j["row"]), doc("check.row"));
}

TEST_F(RecordLines, PairNodeAndFindingWriteTheDocumentedKeys) {
  PairLine bimodal;
  bimodal.modes = PairModes{TwoModes{100, 400, 0.75, 30, 0.9}, "unidir_ab"};
  EXPECT_EQ(keys_of(to_json(bimodal)), doc("pair"));
  EXPECT_EQ(minus(doc("pair"), keys_of(to_json(PairLine{}))), Keys{"modes"});
  EXPECT_EQ(keys_of(to_json(NodeLine{})), doc("node"));
  FindingLine node;
  node.kind = "node";
  FindingLine link;
  link.kind = "link";
  Keys both = keys_of(to_json(node));
  for (const auto& k : keys_of(to_json(link))) both.insert(k);
  EXPECT_EQ(both, doc("finding"));
  EXPECT_FALSE(to_json(node).contains("node_a"));
  EXPECT_FALSE(to_json(link).contains("node"));
}

TEST_F(RecordLines, GemmAndStepWriteTheDocumentedKeys) {
  EXPECT_EQ(keys_of(to_json(GemmLine{})), doc("gemm"));
  // A GPU step's line: its products, their datatype, and what the model
  // priced them from (a host step's has none, and leaves the four keys out).
  StepLine gpu;
  gpu.products.push_back({"qkv", 8192, 12288, 4096, 1500.5, 549.6, 3, 610.2});
  gpu.products_dtype = "f8e4m3";
  gpu.products_model_source = "measured_curve";
  gpu.products_model_tflops = 600.5;
  EXPECT_EQ(keys_of(to_json(gpu)), doc("step"));
  const Keys host = keys_of(to_json(StepLine{}));
  EXPECT_EQ(minus(doc("step"), host),
            (Keys{"products", "products_dtype", "products_model_source", "products_model_tflops"}));
  EXPECT_EQ(keys_of(to_json(StepModelLine{})), doc("step_model"));
  // The products read back whole.
  const StepLine back = step_from_json(to_json(gpu));
  ASSERT_EQ(back.products.size(), 1u);
  const StepProduct& p = back.products[0];
  EXPECT_EQ(std::tuple(p.name, p.m, p.n, p.k, p.measured_us, p.measured_tflops, p.slowest_rank, p.model_tflops),
            std::tuple(std::string("qkv"), 8192LL, 12288LL, 4096LL, 1500.5, 549.6, 3, 610.2));
  EXPECT_EQ(back.products_dtype, "f8e4m3");
  EXPECT_EQ(back.products_model_source, "measured_curve");
  EXPECT_EQ(back.products_model_tflops, 600.5);
}

TEST_F(RecordLines, StorageWritesTheDocumentedKeysAndReadsBack) {
  StorageLine l;
  l.pattern = "seq_read";
  l.cache = "dropped";
  l.nodes = 2;
  l.hosts = {"a", "b"};
  l.node_gbps = {1.5, 0.5};
  l.aggregate_gbps = 2;
  l.block_bytes = 1 << 20;
  EXPECT_EQ(keys_of(to_json(l)), doc("storage"));
  const StorageLine back = storage_from_json(to_json(l));
  EXPECT_EQ(back.pattern, "seq_read");
  EXPECT_EQ(back.node_gbps, l.node_gbps);
  EXPECT_EQ(back.hosts, l.hosts);
  EXPECT_EQ(back.block_bytes, 1u << 20);
  std::istringstream record("{\"type\":\"run\",\"schema_version\":\"1.5\",\"command\":\"storage\"}\n" +
                            to_json(l).dump() + "\n{\"type\":\"summary\",\"status\":\"complete\"}\n");
  const Results r = parse_results(record, "storage.jsonl");
  ASSERT_EQ(r.storage.size(), 1u);
  EXPECT_EQ(r.storage[0].aggregate_gbps, 2);
}

TEST_F(RecordLines, DiagnosisLinesWriteTheDocumentedKeysAndReadBack) {
  DiagnosisLine gpu;
  gpu.level = "gpu";
  gpu.gpu = 3;
  gpu.verdict = "throttled";
  gpu.also = {"compute_bound"};
  DiagnosisGpuFigures figures;
  figures.sm_util_pct = 97;
  figures.throttle_reasons = {"HW slowdown"};
  gpu.gpu_figures = figures;
  gpu.unknown = {{"nvlink_tx_gbps", "no active NVLink links"}};
  DiagnosisLine node;
  node.level = "node";
  DiagnosisNodeFigures nf;
  nf.iter_median = 1.5;
  node.node_figures = nf;
  Keys both = keys_of(to_json(gpu));
  for (const auto& k : keys_of(to_json(node))) both.insert(k);
  EXPECT_EQ(both, doc("diagnosis"));
  EXPECT_FALSE(to_json(node).contains("gpu"));
  EXPECT_EQ(keys_of(to_json(gpu)["figures"]), doc("diagnosis.gpu_figures"));
  EXPECT_EQ(keys_of(to_json(node)["figures"]), doc("diagnosis.node_figures"));
  const DiagnosisLine g = diagnosis_from_json(to_json(gpu));
  EXPECT_EQ(g.gpu, 3);
  EXPECT_EQ(g.also, gpu.also);
  ASSERT_TRUE(g.gpu_figures);
  EXPECT_EQ(g.gpu_figures->sm_util_pct, 97);
  EXPECT_FALSE(g.gpu_figures->power_w);
  EXPECT_EQ(g.gpu_figures->throttle_reasons, figures.throttle_reasons);
  EXPECT_EQ(g.unknown, gpu.unknown);
  const DiagnosisLine n = diagnosis_from_json(to_json(node));
  ASSERT_TRUE(n.node_figures);
  EXPECT_EQ(n.node_figures->iter_median, 1.5);
  EXPECT_FALSE(n.gpu_figures);
}

TEST_F(RecordLines, CounterLinesWriteTheDocumentedKeysAndReadBack) {
  CounterLine unknown;
  unknown.run_id = "r";
  unknown.row = 7;
  unknown.op = "all_reduce";
  unknown.scope = "inter";
  unknown.bytes = 1 << 20;
  unknown.node = 1;
  unknown.host = "n2";
  unknown.device = "mlx5_0:1";
  unknown.device_kind = "port";
  unknown.counter = "symbol_error";
  unknown.unknown_reason = "saturated";
  EXPECT_EQ(keys_of(to_json(unknown)), doc("counters"));
  EXPECT_TRUE(to_json(unknown)["delta"].is_null());
  CounterLine moved = unknown;
  moved.delta = 3;
  moved.unknown_reason.clear();
  EXPECT_FALSE(to_json(moved).contains("unknown_reason"));
  EXPECT_EQ(to_json(moved)["type"], "counters");
  const CounterLine back = counter_from_json(to_json(moved));
  EXPECT_EQ(back.row, 7u);
  EXPECT_EQ(back.node, 1);
  EXPECT_EQ(back.device, "mlx5_0:1");
  EXPECT_EQ(back.delta, std::optional<std::uint64_t>(3));
  EXPECT_EQ(counter_from_json(to_json(unknown)).unknown_reason, "saturated");
  // Unknown without a reason is no line a writer makes.
  json bad = to_json(unknown);
  bad.erase("unknown_reason");
  EXPECT_THROW(counter_from_json(bad), std::runtime_error);
}

// One summary for every command: the common keys, then the command's part.
TEST_F(RecordLines, EverySummaryHasTheCommonKeysAndItsCommandsPart) {
  Summary early;
  early.status = "hang";
  early.reason = "rank 1 stuck";
  early.report = json{{"timeout_s", 5}};
  const Keys common = keys_of(to_json(early));
  EXPECT_EQ(common, doc("summary"));
  EXPECT_EQ(keys_of(to_json(Summary{})), (Keys{"status", "elapsed_s", "exit_code"}));  // step's, complete
  Summary sweep;
  sweep.sweep = SweepTotals{3, 1, SweepTotals::Figures{0, std::vector<int>{}, 2, 1.5}};
  EXPECT_EQ(minus(keys_of(to_json(sweep)), common), doc("summary.sweep"));
  Summary pairs;
  pairs.pairs = PairsTotals{};
  EXPECT_EQ(minus(keys_of(to_json(pairs)), common), doc("summary.pairs"));
  Summary topo;
  topo.topo = TopoTotals{};
  EXPECT_EQ(minus(keys_of(to_json(topo)), common), doc("summary.topo"));
  Summary gemm;
  gemm.gemm = GemmTotals{2, {GemmSlowest{}}};
  EXPECT_EQ(minus(keys_of(to_json(gemm)), common), doc("summary.gemm"));
  // Closed early by the watchdog: the counts only.
  Summary aborted = early;
  aborted.sweep = SweepTotals{3, 1, std::nullopt};
  EXPECT_EQ(minus(keys_of(to_json(aborted)), common), (Keys{"rows", "skipped"}));
}

// The inventory line topo wrote into a recorded check: every key documented,
// the typed view writing it back unchanged.
TEST_F(RecordLines, InventoryLinesKeepTopoKeysAndTheyAreDocumented) {
  const Results r = read_results(std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/local-smoke-np4.jsonl");
  ASSERT_FALSE(r.inventory.empty());
  for (std::size_t i = 0; i < r.inventory.size(); ++i) {
    const json again = to_json(r.inventory[i]);
    EXPECT_EQ(again, fb::test::json_lines(r.path)[i + 1]) << i;
    EXPECT_EQ(minus(keys_of(again), doc("inventory")), Keys{}) << again.dump();
    // What a line may lack: the keys present only when something could not be read, and the
    // environment (since 1.9; this record is older).
    EXPECT_EQ(minus(minus(doc("inventory"), keys_of(again)), Keys{"gpus_note", "error", "unknown", "environment"}),
              Keys{});
  }
  InventoryPath known{"intra", "NVLink", 450.0, "NVLink4 x18", ""};
  InventoryPath unknown{"inter", "TCP", std::nullopt, "1 x ? (eth0)", "eth0/speed reads -1"};
  InventoryLine l;
  l.paths = {known, unknown};
  const json j = to_json(l);
  Keys path_keys = keys_of(j["paths"][0]);
  for (const auto& k : keys_of(j["paths"][1])) path_keys.insert(k);
  EXPECT_EQ(path_keys, doc("inventory.paths"));
  EXPECT_FALSE(j["paths"][0].contains("unknown_reason"));
  const InventoryLine back = inventory_from_json(j);
  ASSERT_EQ(back.paths.size(), 2u);
  EXPECT_EQ(back.paths[0].peak_gbps, 450.0);
  EXPECT_FALSE(back.paths[1].peak_gbps);
  EXPECT_EQ(back.paths[1].unknown_reason, "eth0/speed reads -1");
}

TEST_F(RecordLines, LinesReadBackWhatTheyWrote) {
  const Measurement m = full_measurement();
  const Measurement mb = measurement_from_json(to_json(m));
  EXPECT_EQ(mb.run_id, m.run_id);
  EXPECT_EQ(mb.wrong_at, m.wrong_at);
  EXPECT_EQ(mb.peer_b, 1);
  ASSERT_TRUE(mb.modes.has_value());
  EXPECT_EQ(mb.modes->high_us, 400);
  EXPECT_EQ(mb.modes->low_share, 0.75);
  EXPECT_EQ(mb.modes->separation, 30);
  RunHeader h;
  h.command = "check";
  h.run_id = "id";
  h.hosts = {"a", "b"};
  h.rank_node = {0, 1};
  h.pairs = PairsPlanRef{1024, 3, 0.5, true};
  const RunHeader hb = header_from_json(to_json(h));
  EXPECT_EQ(hb.run_id, "id");
  EXPECT_EQ(hb.hosts, h.hosts);
  ASSERT_TRUE(hb.pairs);
  EXPECT_TRUE(hb.pairs->rails);
  Summary s;
  s.sweep = SweepTotals{4, 1, SweepTotals::Figures{2, std::vector<int>{3}, std::nullopt, 1.25}};
  s.exit_code = 1;
  const Summary sb = summary_from_json(to_json(s), "check");
  ASSERT_TRUE(sb.sweep && sb.sweep->figures && sb.sweep->figures->wrong_ranks);
  EXPECT_EQ(*sb.sweep->figures->wrong_ranks, std::vector<int>{3});
  EXPECT_FALSE(sb.sweep->figures->passes);
  EXPECT_EQ(sb.exit_code, 1);
  CheckLine c;
  c.status = "skip";
  c.optional = true;
  c.row = CheckRow{"pingpong", "global", 8, false, "float", "shm", 2, std::pair{0, 1}};
  const CheckLine cb = check_from_json(to_json(c));
  EXPECT_TRUE(cb.optional);
  ASSERT_TRUE(cb.row && cb.row->peers);
  EXPECT_EQ(cb.row->peers->second, 1);
  // A key of the wrong type names the line's kind and the key.
  json bad = to_json(PairLine{});
  bad["bidir_gbps"] = "fast";
  try {
    (void)pair_from_json(bad);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pair line: 'bidir_gbps'"), std::string::npos) << e.what();
  }
}

TEST_F(RecordLines, RunIdsDiffer) {
  const std::string a = make_run_id();
  const std::string b = make_run_id();
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::regex_match(a, std::regex(R"(\d{8}T\d{6}Z-[0-9a-f]{16})"))) << a;
}

// Every record in the repository (1.0 to 1.3, hand-made fixtures too) reads
// with the typed readers.
TEST_F(RecordLines, EveryShippedRecordStillReads) {
  int files = 0;
  for (const auto& dir : {"/results", "/tests/accept/fixtures"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(FB_SOURCE_DIR) + dir)) {
      if (e.path().extension() != ".jsonl") continue;
      ++files;
      Results r;
      ASSERT_NO_THROW(r = read_results(e.path().string())) << e.path();
      EXPECT_TRUE(r.complete) << e.path();
      EXPECT_FALSE(r.truncated) << e.path();
    }
  EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace fb
