#include "fabricbench/core/record.hpp"
#include "json_lines.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

namespace fb {
namespace {

namespace fs = std::filesystem;

class RecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fb_record_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  static nlohmann::ordered_json header() {
    return {{"type", "run"}, {"schema_version", schema_version()}, {"ranks", 2}};
  }
  static RunHeader typed_header() {
    RunHeader h;
    h.command = "run";
    h.ranks = 2;
    h.run_id = "20261201T000000Z-0123456789abcdef";
    return h;
  }
  static Summary closing(const std::string& status) {
    Summary s;
    s.status = status;
    return s;
  }
  fs::path dir_;
};

Measurement sample() {
  Measurement m;
  m.op = "all_reduce";
  m.backend = "mpi";
  m.scope = "global";
  m.path = "shm";
  m.dtype = "float";
  m.redop = "sum";
  m.nranks = 4;
  m.bytes = 1 << 20;
  m.count = 1 << 18;
  m.time = {20, 10.0, 12.5, 13.0, 20.0, 21.0, 2.0};
  m.algbw_gbps = 83.886;
  m.busbw_gbps = 125.829;
  m.slowest_rank = 3;
  m.slowest_rank_lag_us = 4.5;
  m.slowest_rank_mean_us = 11.0;
  m.wrong = 2;
  m.wrong_ranks = {1, 3};
  return m;
}

TEST_F(RecordTest, WriteThenReadRoundTrips) {
  RecordWriter w;
  ASSERT_EQ(w.open(path("r.jsonl"), false), "");
  w.write(typed_header());
  w.write(sample());
  w.seal(closing("complete"));
  const Results r = read_results(path("r.jsonl"));
  ASSERT_EQ(r.measurements.size(), 1u);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(fb::test::json_lines(r.path).front()["ranks"], 2);
  const Measurement& m = r.measurements[0];
  EXPECT_EQ(m.op, "all_reduce");
  EXPECT_EQ(m.bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(m.time.median_us, 12.5);
  EXPECT_DOUBLE_EQ(m.busbw_gbps, 125.829);
  EXPECT_EQ(m.wrong_ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(m.peer_a, -1);
}

// Issue 35: two records in one file were merged as if one run measured them.
TEST_F(RecordTest, TwoRecordsInOneFileAreRefusedNamingWhereTheSecondBegins) {
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    RecordWriter w;
    ASSERT_EQ(w.open(path(name), false), "");
    w.write(typed_header());
    w.write(sample());
    w.seal(closing("complete"));
  }
  std::ofstream(path("ab.jsonl")) << std::ifstream(path("a.jsonl")).rdbuf() << std::ifstream(path("b.jsonl")).rdbuf();
  try {
    read_results(path("ab.jsonl"));
    FAIL() << "two records were read as one";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path("ab.jsonl") + ":4: a second run header: the file holds two records (the "
                                                            "second begins here, after 3 lines of the first)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(RecordTest, PerRankTimesOnlyWhenRecorded) {
  Measurement m = sample();
  EXPECT_FALSE(to_json(m).contains("rank_mean_us"));
  m.rank_mean_us = {12.5, -1, 13.25, 40.0};
  const Measurement back = measurement_from_json(to_json(m));
  EXPECT_EQ(back.rank_mean_us, m.rank_mean_us);
  auto j = to_json(m);
  j["rank_mean_us"] = "fast";
  EXPECT_THROW(measurement_from_json(j), std::runtime_error);
}

TEST_F(RecordTest, KeysCarryUnitsAndTypeComesFirst) {
  const std::string line = to_json(sample()).dump();
  EXPECT_EQ(line.rfind("{\"type\":\"measurement\"", 0), 0u);
  for (const char* key : {"time_median_us", "algbw_gbps", "busbw_gbps", "bytes", "slowest_rank_lag_us"})
    EXPECT_NE(line.find(key), std::string::npos) << key;
}

TEST_F(RecordTest, ReaderRejectsOtherMajorVersion) {
  std::ofstream(path("v2.jsonl")) << R"({"type":"run","schema_version":"2.0"})" << "\n";
  try {
    read_results(path("v2.jsonl"));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2.0"), std::string::npos);
  }
}

TEST_F(RecordTest, ReaderNamesTheBadLine) {
  std::ofstream(path("bad.jsonl")) << R"({"type":"run","schema_version":"1.3"})" << "\n"
                                   << R"({"type":"measurement","op":"all_reduce"})" << "\n";
  try {
    read_results(path("bad.jsonl"));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
  }
}

// What a crash or a full disk leaves: the last line cut, without its
// newline. Every whole line is kept and the cut is said; the record is
// incomplete (no summary). Before 1.4 the whole file was refused.
TEST_F(RecordTest, CutLastLineKeepsEveryWholeLineAndSaysSo) {
  std::ofstream(path("cut.jsonl")) << header().dump() << "\n" << to_json(sample()).dump() << "\n"
                                   << R"({"type":"measur)";
  const Results r = read_results(path("cut.jsonl"));
  EXPECT_TRUE(r.truncated);
  EXPECT_NE(r.truncated_note.find("cut.jsonl:3"), std::string::npos) << r.truncated_note;
  EXPECT_EQ(r.measurements.size(), 1u);
  EXPECT_EQ(r.status, "incomplete");
}

// A cut line followed by more lines is damage, not a crash: an error naming it.
TEST_F(RecordTest, CutLineInTheMiddleIsAnErrorNamingIt) {
  std::ofstream(path("mid.jsonl")) << header().dump() << "\n" << R"({"type":"measur)" << "\n"
                                   << to_json(sample()).dump() << "\n";
  try {
    read_results(path("mid.jsonl"));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mid.jsonl:2"), std::string::npos) << e.what();
  }
  // The same with a newline after the last line: a writer never leaves that.
  std::ofstream(path("nl.jsonl")) << header().dump() << "\n" << R"({"type":"measur)" << "\n";
  EXPECT_THROW(read_results(path("nl.jsonl")), std::runtime_error);
}

// Found by tests/fuzz/record_fuzz.cpp: a "type" (or "schema_version",
// "status") that is not a string escaped as a JSON library exception with
// neither file nor line.
TEST_F(RecordTest, FieldsOfTheWrongTypeNameTheLine) {
  for (const char* bad : {R"({"type":5})", R"({"type":"run","schema_version":1.0})"}) {
    std::istringstream in(std::string(bad) + "\n");
    try {
      parse_results(in, "t.jsonl");
      ADD_FAILURE() << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("t.jsonl:1"), std::string::npos) << e.what();
    }
  }
}

// Found by tests/fuzz/record_fuzz.cpp (with a hand-made seed): numbers out
// of a field's range were cast (1e300 to int: undefined behaviour; -5 bytes
// to 2^64-5: silently wrong). They are now errors naming the line.
TEST_F(RecordTest, NumbersOutOfRangeNameTheLine) {
  for (const char* bad : {R"("root":1e300)", R"("bytes":-5)", R"("nranks":4294967296)", R"("in_place":1)",
                          R"("wrong_ranks":[1.5])", R"("wrong_at":[3])"}) {
    nlohmann::ordered_json line = to_json(sample());
    const auto patch = nlohmann::ordered_json::parse("{" + std::string(bad) + "}");
    line.update(patch);
    std::istringstream in(header().dump() + "\n" + line.dump() + "\n");
    try {
      parse_results(in, "t.jsonl");
      ADD_FAILURE() << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("t.jsonl:2"), std::string::npos) << e.what();
    }
  }
}

// Issue 35: a negative median, a bandwidth of 1e308 (printed "+inf%") and a
// p99 above the maximum were read as measurements. The writer's own line
// with one figure changed is refused naming the line and the key.
TEST_F(RecordTest, FiguresNoMeasurementHasNameTheLineAndTheKey) {
  struct Bad {
    const char* patch;
    const char* says;
  };
  for (const Bad& bad :
       {Bad{R"("time_median_us":-5)", "time_median_us is -5: a time is a number from 0"},
        Bad{R"("busbw_gbps":1e308)", "busbw_gbps is 1e+308: a bandwidth is a number from 0 to"},
        Bad{R"("algbw_gbps":-0.5)", "algbw_gbps is -0.5"}, Bad{R"("time_stddev_us":-1)", "time_stddev_us is -1"},
        Bad{R"("time_p99_us":30)", "time_p99_us 30 lies outside [time_min_us 10, time_max_us 21]"},
        Bad{R"("time_min_us":13)", "time_median_us 12.5 lies outside [time_min_us 13"},
        Bad{R"("busbw_gbps":130)",
            "busbw_gbps 130 is not algbw_gbps 83.886 x all_reduce's factor "
            "1.5 on 4 ranks"},
        Bad{R"("nranks":8)",
            "busbw_gbps 125.829 is not algbw_gbps 83.886 x all_reduce's factor "
            "1.75 on 8 ranks"},
        Bad{R"("count":1000)", "bytes 1048576 is not count 1000 x 4 bytes of float"},
        Bad{R"("time_samples":21)", "time_samples 21 exceeds iterations 20"},
        Bad{R"("op":"all_reduse")", "op 'all_reduse' is not one this fabricbench knows"},
        Bad{R"("scope":"galaxy")", "scope 'galaxy' is not one this fabricbench knows"}}) {
    nlohmann::ordered_json line = to_json(sample());
    line.update(nlohmann::ordered_json::parse("{" + std::string(bad.patch) + "}"));
    std::istringstream in(header().dump() + "\n" + line.dump() + "\n");
    try {
      parse_results(in, "t.jsonl");
      ADD_FAILURE() << bad.patch;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("t.jsonl:2: measurement line: ") + bad.says), std::string::npos)
          << e.what();
    }
  }
  std::istringstream whole(header().dump() + "\n" + to_json(sample()).dump() + "\n");
  EXPECT_EQ(parse_results(whole, "t.jsonl").measurements.size(), 1u) << "the writer's own line reads";
}

// A newer minor schema may add ops and scopes: its lines with names this
// version does not know are left out, the others read (issue 35).
TEST_F(RecordTest, ANewerMinorsUnknownOpIsLeftOutAndTheRestRead) {
  nlohmann::ordered_json newer = header();
  newer["schema_version"] = fmt::format("{}.{}", kSchemaMajor, kSchemaMinor + 1);
  nlohmann::ordered_json future = to_json(sample());
  future["op"] = "all_reduce_v2";
  std::istringstream in(newer.dump() + "\n" + future.dump() + "\n" + to_json(sample()).dump() + "\n");
  const Results r = parse_results(in, "t.jsonl");
  ASSERT_EQ(r.measurements.size(), 1u);
  EXPECT_EQ(r.measurements[0].op, "all_reduce");
}

// One parser of the schema's minor for the reader and every rule that asks
// (counters since 1.11, host timing groups since 1.20): a version with
// anything after its numbers is no version, not minor 0.
TEST(SchemaMinor, OnlyThisMajorsDigitsAreAVersion) {
  EXPECT_EQ(schema_minor_of("1.20"), 20);
  EXPECT_EQ(schema_minor_of("1.0"), 0);
  EXPECT_EQ(schema_minor_of("1"), 0);
  for (const char* bad : {"", "1.", "1.x", "1.20abc", "1.-3", "2.0", "0.9", "v1.2", " 1.2"})
    EXPECT_EQ(schema_minor_of(bad), std::nullopt) << bad;
}

TEST_F(RecordTest, IncompleteRecordHasNoSummary) {
  RecordWriter w;
  ASSERT_EQ(w.open(path("p.jsonl"), false), "");
  w.write(typed_header());
  w.write(sample());
  EXPECT_FALSE(read_results(path("p.jsonl")).complete);
}

TEST_F(RecordTest, WritabilityChecks) {
  EXPECT_EQ(check_output(path("new.jsonl"), "--out", false), "");
  const std::string missing = check_output(path("nope/r.jsonl"), "--out", false);
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
  EXPECT_NE(check_output(dir_.string(), "--out", true).find("is a folder"), std::string::npos);
  RecordWriter w;
  EXPECT_NE(w.open(path("nope/r.jsonl"), false), "");
  EXPECT_THROW(read_results(path("absent.jsonl")), std::runtime_error);
}

TEST_F(RecordTest, SealedRecordEndsWithItsClosingLine) {
  RecordWriter w;
  ASSERT_EQ(w.open(path("s.jsonl"), false), "");
  w.write(typed_header());
  w.write(sample());
  EXPECT_TRUE(w.seal(closing("hang")));
  EXPECT_FALSE(w.seal(closing("complete")));  // the first closing line stands
  w.write(sample());                          // too late: ignored
  const Results r = read_results(path("s.jsonl"));
  EXPECT_EQ(r.line_count, 3u);
  EXPECT_EQ(r.measurements.size(), 1u);
  EXPECT_EQ(r.status, "hang");
  EXPECT_FALSE(r.complete);
}

TEST_F(RecordTest, BurnInFieldsRoundTripAndStatusesAreRead) {
  Measurement m = sample();
  m.wrong_at = {{1, 4, 2}, {3, 17, 1}};
  m.pass = 12;
  std::istringstream in(header().dump() + "\n" + to_json(m).dump() + "\n" +
                        R"({"type":"summary","status":"rank_lost"})" + "\n");
  const Results r = parse_results(in, "memory");
  ASSERT_EQ(r.measurements.size(), 1u);
  EXPECT_EQ(r.measurements[0].wrong_at, m.wrong_at);
  EXPECT_EQ(r.measurements[0].pass, 12);
  EXPECT_EQ(r.status, "rank_lost");
  std::istringstream plain(header().dump() + "\n" + to_json(sample()).dump() + "\n");
  const Results p = parse_results(plain, "memory");
  EXPECT_EQ(p.status, "incomplete");
  EXPECT_EQ(p.measurements[0].pass, 0);
  EXPECT_FALSE(to_json(sample()).contains("pass"));
}

}  // namespace
}  // namespace fb
