// `fabricbench report import nccl-tests` and `report html` end to end, and
// the readers an imported record must satisfy: read_results, model fit,
// report compare, report html and `check --results` (judging the real H200
// runs, and failing the log with wrong elements).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "fabricbench/core/record.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::run_process;

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_report_cli_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string fb(const std::string& args) { return std::string(FB_BINARY) + " " + args; }
  static std::string fixture(const std::string& name) { return std::string(FB_REPORT_FIXTURES) + "/" + name; }
  // `report import nccl-tests FILES --out NAME` into this test's folder.
  test::ProcessResult import(const std::string& files, const std::string& name) const {
    return run_process(fb("report import nccl-tests " + files + " --out " + path(name)));
  }
  nlohmann::json json_file(const std::string& name) const {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in, nullptr, false);
  }
  std::string dir_;
};

// `report scopes --rows`: what scripts count rows with (bench-report-html.sh)
// instead of matching the record's text; the counts are the reader's.
TEST_F(ReportCli, ScopesWithRowsCountEachScopesMeasurements) {
  ASSERT_EQ(import(fixture("two-nodes-16-ranks-srun.log"), "r.jsonl").exit_code, 0);
  const auto r = run_process(fb("report scopes --rows " + path("r.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t global = 0;
  for (const Measurement& m : read_results(path("r.jsonl")).measurements) global += m.scope == "global";
  ASSERT_GT(global, 0u);
  EXPECT_EQ(r.out, "global\t" + std::to_string(global) + "\n");
  EXPECT_EQ(run_process(fb("report scopes " + path("r.jsonl"))).out, "global\n");
}

// `report rows`: each measurement row's times under a header line, what
// bench scripts read instead of matching the record's text.
TEST_F(ReportCli, RowsPrintEachMeasurementsTimesUnderAHeader) {
  ASSERT_EQ(import(fixture("two-nodes-16-ranks-srun.log"), "r.jsonl").exit_code, 0);
  const auto r = run_process(fb("report rows " + path("r.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_results(path("r.jsonl")).measurements;
  ASSERT_FALSE(rows.empty());
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "op\tscope\tbytes\tplacement\titerations\tmedian_us\tmean_us\tci_low_us\tci_high_us\tstopped_by");
  std::size_t n = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(n, rows.size());
    const Measurement& m = rows[n++];
    EXPECT_EQ(line.substr(0, line.find('\t', line.find('\t', line.find('\t') + 1) + 1)),
              m.op + "\t" + m.scope + "\t" + std::to_string(m.bytes))
        << line;
    EXPECT_NE(line.find(m.in_place ? "\tin\t" : "\tout\t"), std::string::npos) << line;
    EXPECT_EQ(line.substr(line.rfind('\t') + 1), m.stopped_by.empty() ? "-" : m.stopped_by) << line;
  }
  EXPECT_EQ(n, rows.size());
  const auto none = run_process(fb("report rows " + path("missing.jsonl")));
  EXPECT_NE(none.exit_code, 0);
}

// `report lines`: every line as the reader has it, at this binary's schema;
// what scripts/plot.py parses. Read back as a record, it is the same record.
TEST_F(ReportCli, LinesPrintEveryLineTheReaderAcceptedAtTodaysSchema) {
  const auto made = run_process(
      fb("run --progress off -b 8 -e 256 --ops all_reduce,broadcast --out " + path("r.jsonl") + " </dev/null"));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto r = run_process(fb("report lines " + path("r.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(path("lines.jsonl")) << r.out;
  const Results was = read_results(path("r.jsonl")), now = read_results(path("lines.jsonl"));
  ASSERT_FALSE(was.measurements.empty());
  ASSERT_EQ(now.measurements.size(), was.measurements.size());
  for (std::size_t i = 0; i < was.measurements.size(); ++i) {
    EXPECT_EQ(now.measurements[i].op, was.measurements[i].op) << i;
    EXPECT_EQ(now.measurements[i].bytes, was.measurements[i].bytes) << i;
    EXPECT_EQ(now.measurements[i].time.median_us, was.measurements[i].time.median_us) << i;
  }
  EXPECT_EQ(now.inventory.size(), was.inventory.size());
  EXPECT_EQ(now.line_count, was.line_count) << "a line left out, or one added";
  EXPECT_EQ(now.status, "complete");
  std::istringstream lines(r.out);
  std::string first, line, last;
  std::getline(lines, first);
  while (std::getline(lines, line)) last = line;
  EXPECT_EQ(nlohmann::json::parse(first)["type"], "run");
  EXPECT_EQ(nlohmann::json::parse(last)["type"], "summary");
  // A record of schema 1.0 comes out at today's schema, with today's keys.
  const auto old =
      run_process(fb("report lines " + std::string(FB_SOURCE_DIR) + "/results/host-mpi-2ranks-2026-11-29.jsonl"));
  ASSERT_EQ(old.exit_code, 0) << old.err;
  std::istringstream old_lines(old.out);
  std::getline(old_lines, first);
  EXPECT_EQ(nlohmann::json::parse(first)["schema_version"], schema_version());
  // A line damaged in the middle: refused, naming the file and the line (exit 2).
  std::string text;
  {
    std::ifstream in(path("r.jsonl"));
    std::getline(in, first);
    std::getline(in, line);
    text = first + "\n{\"type\":\"measurement\",\n" + line + "\n";
  }
  std::ofstream(path("bad.jsonl")) << text;
  const auto bad = run_process(fb("report lines " + path("bad.jsonl")));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(path("bad.jsonl") + ":2"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "") << "nothing printed of a record refused";
}

TEST_F(ReportCli, AnImportedRunGoesThroughEveryReader) {
  const auto r = import(fixture("nccl-tests/all_gather_perf.json") + " " + fixture("nccl-tests/sendrecv_perf.json"),
                        "h200.jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 62 rows of 2 nccl-tests test(s) (all_gather, sendrecv) on 1 rank"), std::string::npos)
      << r.out;
  const Results rec = read_results(path("h200.jsonl"));
  EXPECT_TRUE(rec.complete);
  EXPECT_EQ(rec.header.command, "import");
  EXPECT_EQ(rec.header.backend_version, "2.28.9");
  ASSERT_TRUE(rec.summary && rec.summary->sweep);
  EXPECT_EQ(rec.summary->sweep->rows, 62u);  // the summary's own part reads back for imports
  EXPECT_EQ(rec.measurements.size(), 62u);
  for (const auto& m : rec.measurements) EXPECT_EQ(m.run_id, rec.header.run_id);
  const auto fit = run_process(fb("model fit --format json " + path("h200.jsonl")));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_EQ(nlohmann::json::parse(fit.out)["curves"].size(), 2u);
  ASSERT_EQ(import(fixture("h200-all_gather-sendrecv-mpirun.log"), "text.jsonl").exit_code, 0);
  const auto cmp = run_process(fb("report compare --format json " + path("h200.jsonl") + " " + path("text.jsonl")));
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const auto c = nlohmann::json::parse(cmp.out);
  EXPECT_EQ(c["only_a"], 0);
  EXPECT_EQ(c["only_b"], 0);
  EXPECT_EQ(c["slower"], 0) << "one time per row: no spread to be slower beyond";
  const auto html = run_process(fb("report html " + path("h200.jsonl") + " " + path("text.jsonl") + " -o " +
                                   path("two.html")));
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_GT(std::filesystem::file_size(path("two.html")), 10000u);
}

TEST_F(ReportCli, ImportRefusesUnknownFormatsNamingTheLineAndWritesNothing) {
  const auto r = import(fixture("nccl1-layout.log"), "x.jsonl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nccl1-layout.log:5: column 'bytes'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("x.jsonl")));
  const auto op = run_process(fb("report import nccl-tests " + fixture("nccl1-layout.log") + " --op reduce_all --out " +
                                 path("y.jsonl")));
  EXPECT_EQ(op.exit_code, 2);
  EXPECT_NE(op.err.find("--op 'reduce_all' is unknown"), std::string::npos) << op.err;
}

// Issue 35: an import that read no row wrote an empty record and exited 0.
TEST_F(ReportCli, ImportOfNoRowIsExitTwoSayingWhyAndWritesNothing) {
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(fixture("nccl-tests/sendrecv_perf.json")));
  doc["results"] = nlohmann::json::array();
  const std::string empty = path("empty.json");
  std::ofstream(empty) << doc.dump();
  const auto r = import(empty, "none.jsonl");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nothing to import from " + empty + ": tables without a row of a size above 0"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("none.jsonl")));
  const std::string blank = path("blank.log");
  std::ofstream(blank) << "# nccl-tests printed nothing yet\n";
  const auto text = import(blank, "none2.jsonl");
  EXPECT_EQ(text.exit_code, 2) << text.err;
  EXPECT_NE(text.err.find(blank + ":1: no nccl-tests results table in this file"), std::string::npos) << text.err;
}

// Issue 35: with --overwrite an output that is its own input (by name or
// through a link) replaced the only copy of the record.
TEST_F(ReportCli, AnOutputThatIsItsOwnInputIsRefusedAndTheInputKept) {
  ASSERT_EQ(import(fixture("nccl-tests/sendrecv_perf.json"), "r.jsonl").exit_code, 0);
  const std::size_t rows = read_results(path("r.jsonl")).measurements.size();
  ASSERT_GT(rows, 0u);
  std::filesystem::create_symlink(path("r.jsonl"), path("link.jsonl"));
  const auto html = run_process(fb("report html " + path("link.jsonl") + " -o " + path("r.jsonl") + " --overwrite"));
  EXPECT_EQ(html.exit_code, 2) << html.err;
  EXPECT_NE(html.err.find("-o '" + path("r.jsonl") + "' is the input '" + path("link.jsonl") +
                          "': writing it would destroy what it is made from"),
            std::string::npos)
      << html.err;
  EXPECT_EQ(read_results(path("r.jsonl")).measurements.size(), rows);
  std::filesystem::copy_file(fixture("nccl-tests/sendrecv_perf.json"), path("s.json"));
  const auto self = run_process(fb("report import nccl-tests " + path("s.json") + " --out " + path("s.json") +
                                   " --overwrite"));
  EXPECT_EQ(self.exit_code, 2) << self.err;
  EXPECT_NE(self.err.find("--out '" + path("s.json") + "' is the input"), std::string::npos) << self.err;
  EXPECT_EQ(std::filesystem::file_size(path("s.json")),
            std::filesystem::file_size(fixture("nccl-tests/sendrecv_perf.json")));
}

TEST_F(ReportCli, OutputsAreNotReplacedWithoutOverwrite) {
  ASSERT_EQ(import(fixture("nccl-tests/sendrecv_perf.json"), "r.jsonl").exit_code, 0);
  const auto again = import(fixture("nccl-tests/sendrecv_perf.json"), "r.jsonl");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("r.jsonl"), std::string::npos) << again.err;
  ASSERT_EQ(run_process(fb("report html " + path("r.jsonl") + " -o " + path("p.html"))).exit_code, 0);
  const auto html = run_process(fb("report html " + path("r.jsonl") + " -o " + path("p.html")));
  EXPECT_EQ(html.exit_code, 2);
  EXPECT_NE(html.err.find("--overwrite"), std::string::npos) << html.err;
  EXPECT_EQ(run_process(fb("report html " + path("r.jsonl") + " -o " + path("p.html") + " --overwrite")).exit_code, 0);
  const auto missing = run_process(fb("report html " + path("nope.jsonl") + " -o " + path("q.html")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.jsonl"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(path("q.html")));
}

TEST_F(ReportCli, CheckJudgesTheImportedH200Runs) {
  ASSERT_EQ(import(fixture("nccl-tests/all_gather_perf.json") + " " + fixture("nccl-tests/sendrecv_perf.json"),
                   "h200.jsonl")
                .exit_code,
            0);
  const auto r = run_process(fb("check --progress off --profile " + fixture("h200-nccl-tests.yaml") + " --results " +
                                path("h200.jsonl") + " --out-dir " + path("check")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 passed, 0 failed, 1 skipped"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(std::ifstream(path("check/check.json")));
  EXPECT_EQ(j["status"], "pass");
  for (const auto& v : j["verdicts"]) {
    if (v["rule"] == "sendrecv 8 GiB steady") {
      EXPECT_EQ(v["status"], "skip");
      EXPECT_NE(v["reason"].get<std::string>().find("one timed iteration"), std::string::npos) << v.dump();
    }
    if (v["rule"] == "sendrecv 8 B latency") {
      EXPECT_NEAR(v["measured"].get<double>(), 7.4657, 1e-9);
    }
  }
  // The page of that verdict, with the record.
  const auto html = run_process(fb("report html " + path("h200.jsonl") + " --check " + path("check/check.json") +
                                   " -o " + path("v.html")));
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::ifstream in(path("v.html"));
  const std::string page((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(page.find("<section id=\"verdict\" data-status=\"pass\">"), std::string::npos);
}

TEST_F(ReportCli, CheckFailsAnImportedLogWithWrongElements) {
  ASSERT_EQ(import(fixture("one-node-8-gpus-wrong-elements.log"), "a100.jsonl").exit_code, 0);
  const auto r = run_process(fb("check --progress off --profile " + fixture("a100-nccl-tests.yaml") + " --results " +
                                path("a100.jsonl") + " --out-dir " + path("check")));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(std::ifstream(path("check/check.json")));
  EXPECT_EQ(j["status"], "fail");
  for (const auto& v : j["verdicts"]) {
    if (v["rule"] == "nothing wrong") {
      EXPECT_EQ(v["status"], "fail");
      EXPECT_DOUBLE_EQ(v["measured"].get<double>(), 3);
    }
    if (v["rule"] == "all_reduce 64 MiB busbw") {
      EXPECT_EQ(v["status"], "pass") << v.dump();
    }
  }
}

TEST_F(ReportCli, CheckSaysACutLogDidNotFinish) {
  ASSERT_EQ(import(fixture("cut-after-a-row.log"), "cut.jsonl").exit_code, 0);
  const auto r = run_process(fb("check --progress off --profile " + fixture("a100-nccl-tests.yaml") + " --results " +
                                path("cut.jsonl") + " --out-dir " + path("check")));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("did not finish"), std::string::npos) << r.err;
}

TEST_F(ReportCli, ModelAndReportAloneListTheirSubcommands) {
  const auto model = run_process(fb("model"));
  EXPECT_EQ(model.exit_code, 2);
  for (const char* sub : {"fit", "step", "scale", "memory", "quotes", "presets"})
    EXPECT_NE(model.err.find(std::string("\n  ") + sub + " "), std::string::npos) << sub << "\n" << model.err;
  const auto report = run_process(fb("report"));
  EXPECT_EQ(report.exit_code, 2);
  for (const char* sub : {"compare", "html", "import"})
    EXPECT_NE(report.err.find(std::string("\n  ") + sub + " "), std::string::npos) << sub << "\n" << report.err;
  const auto typo = run_process(fb("model quote"));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("choose one of: fit, step, scale, memory, quotes, data, presets"), std::string::npos) << typo.err;
}

}  // namespace
}  // namespace fb
