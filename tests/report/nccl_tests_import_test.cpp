// nccl-tests' text and -J JSON output read into measurement rows: the real
// H200 JSON runs, the same runs as text under mpirun's prefixes, other
// launchers and layouts, and the formats that must be refused naming the line.
#include "fabricbench/report/nccl_tests.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fabricbench/core/errors.hpp"
#include "messages.hpp"

namespace fb::report {
namespace {

std::string import_fixture(const std::string& name) { return std::string(FB_REPORT_FIXTURES) + "/" + name; }

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

NcclTestsImport text(const std::string& body, const std::string& name, const ImportOptions& o = {}) {
  std::istringstream in(body);
  return parse_nccl_tests_text(in, name, o);
}

using test::refusal;

TEST(NcclTestsImport, JsonRunBecomesOneRowPerPlacementAndSize) {
  const auto path = import_fixture("nccl-tests/sendrecv_perf.json");
  const auto doc = nlohmann::json::parse(text_of(path));
  const NcclTestsImport im = parse_nccl_tests_json(text_of(path), path, {});
  ASSERT_EQ(im.tables.size(), 1u);
  const NcclTestsTable& t = im.tables[0];
  EXPECT_EQ(t.op, "sendrecv");
  EXPECT_EQ(t.nranks, 1);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].host, "vm");
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.iters, 20);
  EXPECT_TRUE(t.finished);
  EXPECT_EQ(im.nccl_version, "2.28.9");
  ASSERT_EQ(t.rows.size(), 2 * doc["results"].size());
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const auto& r = doc["results"][i];
    const Measurement& out = t.rows[2 * i];
    const Measurement& in = t.rows[2 * i + 1];
    EXPECT_FALSE(out.in_place);
    EXPECT_TRUE(in.in_place);
    EXPECT_EQ(out.bytes, r["size"].get<std::uint64_t>());
    EXPECT_DOUBLE_EQ(out.time.median_us, r["out_of_place"]["time"].get<double>());
    EXPECT_DOUBLE_EQ(in.time.median_us, r["in_place"]["time"].get<double>());
    // algbw = size / time, as nccl-tests computes it before printing six decimals.
    EXPECT_NEAR(out.algbw_gbps, r["out_of_place"]["alg_bw"].get<double>(),
                1e-6 + 1e-5 * r["out_of_place"]["alg_bw"].get<double>());
    EXPECT_DOUBLE_EQ(out.busbw_gbps, out.algbw_gbps);  // sendrecv: factor 1
    EXPECT_EQ(out.wrong, 0);
    EXPECT_EQ(in.wrong, -1) << "null nwrong is 'not checked', not 0";
    // One printed time: no spread is invented.
    EXPECT_EQ(out.time.iterations, 1u);
    EXPECT_EQ(out.time.min_us, out.time.max_us);
    EXPECT_EQ(out.time.stddev_us, 0.0);
  }
}

TEST(NcclTestsImport, TheTextOfARunAgreesWithItsJson) {
  const NcclTestsImport txt = read_nccl_tests({import_fixture("h200-all_gather-sendrecv-mpirun.log")}, {});
  const NcclTestsImport js = read_nccl_tests(
      {import_fixture("nccl-tests/all_gather_perf.json"), import_fixture("nccl-tests/sendrecv_perf.json")}, {});
  EXPECT_EQ(txt.nccl_tests_version, "2.19.6");
  EXPECT_EQ(txt.nccl_version, js.nccl_version);
  ASSERT_EQ(txt.tables.size(), 2u);
  ASSERT_EQ(js.tables.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(txt.tables[k].op, js.tables[k].op);
    EXPECT_EQ(txt.tables[k].devices.size(), 1u);
    ASSERT_EQ(txt.tables[k].rows.size(), js.tables[k].rows.size());
    for (std::size_t i = 0; i < js.tables[k].rows.size(); ++i) {
      const Measurement& a = txt.tables[k].rows[i];
      const Measurement& b = js.tables[k].rows[i];
      EXPECT_EQ(a.bytes, b.bytes);
      EXPECT_EQ(a.in_place, b.in_place);
      EXPECT_EQ(a.wrong, b.wrong);
      // nccl-tests prints times with 2, 1 or 0 decimals by magnitude.
      const double t = b.time.median_us;
      EXPECT_NEAR(a.time.median_us, t, t >= 10000 ? 0.5 : t >= 100 ? 0.05 : 0.005) << a.op << " " << a.bytes;
    }
  }
}

// A line of 200,000 digits (srun's prefix pattern is ^\s*\d+: ) once ended
// the import with SIGSEGV in std::regex; it is passed over and said.
TEST(NcclTestsImport, ALineTooLongForTheRegexIsPassedOverAndSaid) {
  const NcclTestsImport plain = read_nccl_tests({import_fixture("h200-all_gather-sendrecv-mpirun.log")}, {});
  const std::string body =
      std::string(200'000, '7') + "\n" + text_of(import_fixture("h200-all_gather-sendrecv-mpirun.log"));
  const NcclTestsImport r = text(body, "long.log");
  ASSERT_EQ(r.tables.size(), plain.tables.size());
  EXPECT_EQ(r.tables[0].rows.size(), plain.tables[0].rows.size());
  ASSERT_EQ(r.notes.size(), plain.notes.size() + 1);
  EXPECT_NE(r.notes.back().find("1 line of long.log longer than 8192 bytes was not read (the first is line 1)"),
            std::string::npos)
      << r.notes.back();
}

TEST(NcclTestsImport, SrunPrefixesAndRanksOnTwoHosts) {
  const NcclTestsImport im = read_nccl_tests({import_fixture("two-nodes-16-ranks-srun.log")}, {});
  ASSERT_EQ(im.tables.size(), 1u);
  const NcclTestsTable& t = im.tables[0];
  EXPECT_EQ(t.op, "all_reduce");
  EXPECT_EQ(t.nranks, 16);
  const ImportRecord rec = import_record(im, "id");
  EXPECT_EQ(rec.header.command, "import");
  EXPECT_EQ(rec.header.ranks, 16);
  EXPECT_EQ(rec.header.hosts, (std::vector<std::string>{"gpu-b01", "gpu-b02"}));
  EXPECT_EQ(rec.header.ranks_per_node, (std::vector<int>{8, 8}));
  ASSERT_EQ(rec.rows.size(), 20u);
  for (const Measurement& m : rec.rows) {
    EXPECT_EQ(m.run_id, "id");
    EXPECT_EQ(m.scope, "global");
    EXPECT_EQ(m.redop, "sum");
    EXPECT_NEAR(m.busbw_gbps, m.algbw_gbps * 2 * 15 / 16, 1e-9 * m.busbw_gbps);
  }
  EXPECT_EQ(rec.summary.status, "complete");
  ASSERT_TRUE(rec.summary.sweep && rec.summary.sweep->figures);
  EXPECT_EQ(rec.summary.sweep->rows, 20u);
  EXPECT_EQ(rec.summary.sweep->figures->wrong, 0);
}

TEST(NcclTestsImport, OlderLayoutWithoutRanksOrCounts) {
  const NcclTestsImport im = read_nccl_tests({import_fixture("all_reduce_perf-old-layout.log")}, {});
  ASSERT_EQ(im.tables.size(), 1u);
  EXPECT_EQ(im.tables[0].op, "all_reduce");  // from the file name
  EXPECT_EQ(im.tables[0].nranks, 2);         // busbw = algbw: all_reduce's 2(n-1)/n is 1 at n = 2
  for (const Measurement& m : im.tables[0].rows) EXPECT_EQ(m.wrong, -1) << "an error column is no count";
  std::string notes;
  for (const auto& n : im.notes) notes += n + "\n";
  EXPECT_NE(notes.find("busbw/algbw ratio"), std::string::npos) << notes;
  EXPECT_NE(notes.find("largest error"), std::string::npos) << notes;
}

TEST(NcclTestsImport, WrongElementsAreCounted) {
  const NcclTestsImport im = read_nccl_tests({import_fixture("one-node-8-gpus-wrong-elements.log")}, {});
  ASSERT_EQ(im.tables.size(), 1u);
  EXPECT_EQ(im.tables[0].nranks, 8);
  EXPECT_EQ(im.tables[0].args, (std::vector<std::string>{"-b", "1K", "-e", "64M", "-f", "4", "-g", "8"}));
  int wrong_rows = 0;
  for (const Measurement& m : im.tables[0].rows)
    if (m.wrong > 0) {
      ++wrong_rows;
      EXPECT_EQ(m.wrong, 3);
      EXPECT_TRUE(m.in_place);
      EXPECT_EQ(m.bytes, 4u << 20);
    }
  EXPECT_EQ(wrong_rows, 1);
  EXPECT_EQ(import_record(im, "x").summary.sweep->figures->wrong, 3);
}

TEST(NcclTestsImport, UnknownFormatsAreRefusedNamingTheLine) {
  const std::string nccl1 = refusal([] { read_nccl_tests({import_fixture("nccl1-layout.log")}, {}); });
  EXPECT_NE(nccl1.find("nccl1-layout.log:5:"), std::string::npos) << nccl1;
  EXPECT_NE(nccl1.find("column 'bytes'"), std::string::npos) << nccl1;
  const std::string cut = refusal([] { read_nccl_tests({import_fixture("cut-inside-a-row.log")}, {}); });
  EXPECT_NE(cut.find("cut-inside-a-row.log:20:"), std::string::npos) << cut;
  EXPECT_NE(cut.find("6 fields where the heads name 13"), std::string::npos) << cut;
  const std::string none = refusal([] { text("hello\nworld\n", "notes.txt"); });
  EXPECT_NE(none.find("notes.txt:1: no nccl-tests results table"), std::string::npos) << none;
  EXPECT_NE(none.find("'hello'"), std::string::npos) << none;
  const std::string units = refusal([] {
    text(
        "# Collective test starting: all_reduce_perf\n#  size  count  type  redop  root  time  algbw  busbw #wrong\n"
        "#  (B)  (elements)  (ms)  (GB/s)  (GB/s)\n",
        "ms.log");
  });
  EXPECT_NE(units.find("ms.log:3: the units line"), std::string::npos) << units;
  const std::string json = refusal([] { parse_nccl_tests_json("{\"version\": 3}", "v3.json", {}); });
  EXPECT_NE(json.find("no \"args\""), std::string::npos) << json;
}

TEST(NcclTestsImport, ATableCutAfterAWholeRowIsKeptAndSaidUnfinished) {
  const NcclTestsImport im = read_nccl_tests({import_fixture("cut-after-a-row.log")}, {});
  ASSERT_EQ(im.tables.size(), 1u);
  EXPECT_FALSE(im.tables[0].finished);
  EXPECT_EQ(im.tables[0].rows.size(), 6u);
  ASSERT_EQ(im.failures.size(), 1u);
  EXPECT_NE(im.failures[0].find("without nccl-tests' closing lines"), std::string::npos) << im.failures[0];
  const ImportRecord rec = import_record(im, "x");
  EXPECT_EQ(rec.summary.status, "error");
  EXPECT_NE(rec.summary.reason.find("cut-after-a-row.log:"), std::string::npos) << rec.summary.reason;
}

// A rank count that does not fit the printed busbw is caught, not recorded.
TEST(NcclTestsImport, ARankCountTheFiguresContradictIsRefused) {
  std::string log;
  std::istringstream lines(text_of(import_fixture("two-nodes-16-ranks-srun.log")));
  for (std::string l; std::getline(lines, l);)
    if (l.find("Rank ") == std::string::npos) log += l + "\n";
  const std::string wrong = refusal([&] { text(log, "no-ranks.log", {"", 4}); });
  EXPECT_NE(wrong.find("does not follow from algbw"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("for 4 ranks"), std::string::npos) << wrong;
  const NcclTestsImport inferred = text(log, "no-ranks.log");
  ASSERT_EQ(inferred.tables.size(), 1u);
  EXPECT_EQ(inferred.tables[0].nranks, 16);  // 2(n-1)/n = 1.875 printed to four digits
}

TEST(NcclTestsImport, ATableTheLogDoesNotNameNeedsOp) {
  std::string log = text_of(import_fixture("two-nodes-16-ranks-srun.log"));
  log.erase(0, log.find('\n') + 1);  // the srun command line named the binary
  const std::string why = refusal([&] { text(log, "run.log"); });
  EXPECT_NE(why.find("give --op"), std::string::npos) << why;
  EXPECT_EQ(text(log, "run.log", {"all_reduce", 0}).tables.at(0).op, "all_reduce");
}

// args[0] names the test: a path, the MPI build's _mpi suffix, and a name of
// 40,000 letters (std::regex once took seconds and a stack frame per letter
// on it; the fuzzer's seed json-long-binary holds that case under ASan).
TEST(NcclTestsImport, TheJsonArgsFirstWordNamesTheTest) {
  const auto op_of = [](const std::string& args0, const std::string& fixture = "sendrecv_perf.json") {
    nlohmann::json doc = nlohmann::json::parse(text_of(import_fixture("nccl-tests/" + fixture)));
    doc["args"][0] = args0;
    return parse_nccl_tests_json(doc.dump(), "run.json", {}).tables.at(0).op;
  };
  EXPECT_EQ(op_of("/opt/nccl-tests/build/sendrecv_perf"), "sendrecv");
  EXPECT_EQ(op_of("./build/all_gather_perf_mpi", "all_gather_perf.json"), "all_gather");
  EXPECT_EQ(op_of("all_gather_perf", "all_gather_perf.json"), "all_gather");
  const std::string unknown = refusal([&] { op_of(std::string(40'000, 'a') + "_perf"); });
  EXPECT_NE(unknown.find("names no nccl-tests test fabricbench knows: give --op"), std::string::npos) << unknown;
  // Not a test's name: a word runs on past "_perf", or none ends in it.
  EXPECT_NE(refusal([&] { op_of("./all_reduce_perfX"); }).find("give --op"), std::string::npos);
  EXPECT_NE(refusal([&] { op_of("./mpirun"); }).find("give --op"), std::string::npos);
}

TEST(NcclTestsImport, VersionCodes) {
  EXPECT_EQ(nccl_version_from_code(22809), "2.28.9");
  EXPECT_EQ(nccl_version_from_code(21905), "2.19.5");
  EXPECT_EQ(nccl_version_from_code(2704), "2.7.4");  // before 2.9: X*1000 + Y*100 + Z
  EXPECT_EQ(nccl_version_from_code(0), "");
}

}  // namespace
}  // namespace fb::report
