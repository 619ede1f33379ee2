// Every earlier minor of the record's schema stays readable (issue 33): a
// record the binary writes now, with the keys each later minor added taken
// out (record.hpp's kSchemaMinor history), reads at every minor from 1.0 to
// today's, with the same rows. The shipped records in results/ cover some
// minors; this covers each one, with lines of today's writers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabricbench/core/record.hpp"
#include "json_lines.hpp"
#include "process.hpp"

namespace fb {
namespace {

using json = nlohmann::ordered_json;

// A key a line kind gained at a minor (`in` names a nested object, "" = the line itself).
struct Added {
  const char* type;
  const char* in;
  const char* key;
  int minor;
};

constexpr Added kAdded[] = {
    {"measurement", "", "wrong_at", 3},
    {"measurement", "", "pass", 3},
    {"summary", "", "status", 3},
    {"summary", "", "reason", 3},
    {"summary", "", "report", 3},
    {"run", "", "run_id", 4},
    {"run", "", "build", 4},
    {"measurement", "", "run_id", 4},
    {"measurement", "", "time_ci_low_us", 5},
    {"measurement", "", "time_ci_high_us", 5},
    {"measurement", "", "stopped_by", 5},
    {"run", "options", "median_ci", 5},
    {"measurement", "", "time_samples", 6},
    {"run", "", "simulated", 7},
    {"inventory", "gpus", "compute_mode", 8},
    {"inventory", "gpus", "mig", 8},
    {"inventory", "gpus", "processes", 8},
    {"run", "options", "cap_min_iters", 8},
    {"inventory", "", "environment", 9},
    {"measurement", "", "modes", 9},
    {"pair", "", "modes", 9},
    {"inventory", "gpus", "fabric", 10},
    // The counters line kind (kAddedKinds) came with all its keys.
    {"counters", "", "run_id", 11},
    {"counters", "", "row", 11},
    {"counters", "", "op", 11},
    {"counters", "", "scope", 11},
    {"counters", "", "bytes", 11},
    {"counters", "", "in_place", 11},
    {"counters", "", "node", 11},
    {"counters", "", "host", 11},
    {"counters", "", "device", 11},
    {"counters", "", "device_kind", 11},
    {"counters", "", "counter", 11},
    {"counters", "", "delta", 11},
    {"counters", "", "unknown_reason", 11},
    {"run", "", "counters", 12},
    {"step", "", "planned_non_gemm_us", 16},
    {"step", "", "planned_optimizer_us", 16},
    {"step", "", "compute_us", 16},
    {"step", "", "non_gemm_us", 16},
    {"step", "", "optimizer_us", 16},
    {"step_model", "", "non_gemm_us", 16},
    {"step_model", "", "optimizer_us", 16},
    {"step", "", "products", 17},
    {"step", "", "products_model_source", 17},
    {"step", "", "products_model_tflops", 17},
    {"run", "options", "cap_bytes_per_rank", 18},
    {"step", "", "products_dtype", 18},
    {"run", "", "mpi_thread_level", 19},
    {"run", "options", "timing_group_span_us", 20},
};

// Line kinds a minor added: a writer of an earlier minor wrote none.
struct AddedKind {
  const char* type;
  int minor;
};
constexpr AddedKind kAddedKinds[] = {
    {"inventory", 1},
    {"counters", 11},
};

bool kind_added_after(const std::string& type, int minor) {
  for (const AddedKind& k : kAddedKinds)
    if (type == k.type && minor < k.minor) return true;
  return false;
}

void erase_in(json& j, const std::string& key) {
  if (j.is_array())
    for (auto& item : j) erase_in(item, key);
  else if (j.is_object())
    j.erase(key);
}

// `lines` as a writer of schema 1.`minor` would have written them.
std::vector<json> as_minor(std::vector<json> lines, int minor) {
  std::vector<json> out;
  for (auto& line : lines) {
    const std::string type = line["type"];
    if (kind_added_after(type, minor)) continue;
    for (const Added& a : kAdded) {
      if (a.minor <= minor || type != a.type) continue;
      if (*a.in == '\0')
        line.erase(a.key);
      else if (line.contains(a.in))
        erase_in(line[a.in], a.key);
    }
    if (type == "run") line["schema_version"] = "1." + std::to_string(minor);
    out.push_back(std::move(line));
  }
  return out;
}

class RecordMinors : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_minors_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(RecordMinors, EveryEarlierMinorReadsWithTheSameRows) {
  const auto r = test::run_process("timeout 120 " + test::mpirun(2) + " " + FB_BINARY +
                                   " run --progress off -q -b 8 -e 4K -f 8 -n 4 -w 1 --ops all_reduce,pingpong -c "
                                   "--out " +
                                   path("now.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results now = read_results(path("now.jsonl"));
  ASSERT_GE(now.measurements.size(), 4u);
  const std::vector<json> lines = test::json_lines(path("now.jsonl"));
  // The table above must name keys today's writer really writes, or it proves nothing.
  std::size_t seen = 0;
  for (const Added& a : kAdded)
    for (const json& l : lines)
      if (l["type"] == a.type &&
          (*a.in ? l.contains(a.in) && l[a.in].dump().find(std::string("\"") + a.key + "\"") != std::string::npos
                 : l.contains(a.key))) {
        ++seen;
        break;
      }
  EXPECT_GE(seen, 8u) << "the keys of later minors are not in today's record: the test would strip nothing";

  for (int minor = 0; minor <= kSchemaMinor; ++minor) {
    SCOPED_TRACE("schema 1." + std::to_string(minor));
    const std::string file = path("1." + std::to_string(minor) + ".jsonl");
    {
      std::ofstream out(file);
      for (const json& l : as_minor(lines, minor)) out << l.dump() << "\n";
    }
    Results old;
    ASSERT_NO_THROW(old = read_results(file));
    EXPECT_EQ(old.header.schema_version, "1." + std::to_string(minor));
    EXPECT_TRUE(old.complete);
    EXPECT_EQ(old.inventory.size(), minor < 1 ? 0u : now.inventory.size());
    ASSERT_EQ(old.measurements.size(), now.measurements.size());
    for (std::size_t i = 0; i < now.measurements.size(); ++i) {
      const Measurement& a = old.measurements[i];
      const Measurement& b = now.measurements[i];
      EXPECT_EQ(a.op, b.op);
      EXPECT_EQ(a.bytes, b.bytes);
      EXPECT_EQ(a.time.median_us, b.time.median_us);
      EXPECT_EQ(a.busbw_gbps, b.busbw_gbps);
      EXPECT_EQ(a.wrong, b.wrong);
      EXPECT_EQ(a.run_id, minor < 4 ? "" : b.run_id);
      EXPECT_EQ(a.time.ci_high_us, minor < 5 ? 0.0 : b.time.ci_high_us);
    }
  }
}

}  // namespace
}  // namespace fb
