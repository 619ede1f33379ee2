// Iteration times from the log formats training frameworks write (lines as
// Megatron-LM, DeepSpeed and tqdm print them), a regex for others, and the
// log read while it grows.
#include "fabricbench/diagnose/iter_log.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fabricbench/core/errors.hpp"

namespace fb::diagnose {
namespace {

TEST(IterLog, MegatronElapsedTimePerIterationInMilliseconds) {
  const std::string log =
      " [2025-08-01 07:19:37] iteration        1/    5000 | consumed samples:          128 | elapsed time per "
      "iteration (ms): 19138.8 | throughput per GPU (TFLOP/s/GPU): 80.2 | learning rate: 6.976744E-08 |\n"
      "[Rank 0] (after 1 iterations) memory (MB) | allocated: 10770.3 | max allocated: 15754.8\n"
      " [2025-08-01 07:19:50] iteration        2/    5000 | consumed samples:          256 | elapsed time per "
      "iteration (ms): 13105.3 | learning rate: 1.2E-05 |\n";
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "megatron");
  EXPECT_EQ(s.unit, "s");
  ASSERT_EQ(s.values.size(), 2u);
  EXPECT_DOUBLE_EQ(s.values[0], 19.1388);
  EXPECT_DOUBLE_EQ(s.values[1], 13.1053);
}

TEST(IterLog, MegatronWinsOverDeepSpeedInMegatronDeepSpeedLogs) {
  const std::string log =
      "[2024-03-07 15:27:02,646] [INFO] [timer.py:260:stop] epoch=0/micro_step=199/global_step=199, "
      "RunningAvgSamplesPerSec=58.73, CurrSamplesPerSec=61.35, MemAllocated=6.01GB, MaxMemAllocated=19.52GB\n"
      "iteration      199/  317892 | consumed samples:       152832 | elapsed time per iteration (ms): 14287.5 |\n";
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "megatron");
  ASSERT_EQ(s.values.size(), 1u);
  EXPECT_DOUBLE_EQ(s.values[0], 14.2875);
}

TEST(IterLog, DeepSpeedSamplesPerSecondAreSecondsPerSample) {
  const std::string log =
      "[2023-10-31 08:58:33,237] [INFO] [logging.py:96:log_dist] [Rank 0] step=14000, skipped=25, lr=[0.001]\n"
      "[2023-10-31 08:58:33,237] [INFO] [timer.py:260:stop] epoch=0/micro_step=14000/global_step=14000, "
      "RunningAvgSamplesPerSec=1412.76, CurrSamplesPerSec=1250.0, MemAllocated=0.0GB, MaxMemAllocated=0.0GB\n"
      "[2023-10-31 08:58:34,113] [INFO] [timer.py:260:stop] epoch=0/micro_step=14010/global_step=14010, "
      "RunningAvgSamplesPerSec=1410.00, CurrSamplesPerSec=500, MemAllocated=0.0GB, MaxMemAllocated=0.0GB\n";
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "deepspeed");
  EXPECT_EQ(s.unit, "s/sample");
  ASSERT_EQ(s.values.size(), 2u);
  EXPECT_DOUBLE_EQ(s.values[0], 1.0 / 1250.0);
  EXPECT_DOUBLE_EQ(s.values[1], 1.0 / 500.0);
}

TEST(IterLog, TqdmBarsCountEachIterationOnceInBothRateForms) {
  // tqdm redraws with '\r'; the Hugging Face Trainer's bar in a log file.
  const std::string log =
      "  1%|          | 10/1000 [00:20<33:00,  2.00s/it]\r  1%|          | 10/1000 [00:20<33:00,  2.01s/it]"
      "\r  1%|          | 11/1000 [00:22<33:00,  1.90s/it, loss=2.31]\r"
      "  2%|▏         | 20/1000 [00:05<04:05,  4.00it/s]\n";
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "tqdm");
  ASSERT_EQ(s.values.size(), 3u);
  EXPECT_DOUBLE_EQ(s.values[0], 2.01);  // n=10 redrawn: the last reading
  EXPECT_DOUBLE_EQ(s.values[1], 1.90);
  EXPECT_DOUBLE_EQ(s.values[2], 0.25);
}

TEST(IterLog, KeysInKeyValueAndJsonLinesWithTheirUnits) {
  const std::string log =
      "step 1 iter_time=0.52 loss=3.1\n"
      "{\"step\": 2, \"iteration_time_ms\": 480.0, \"loss\": 3.0}\n"
      "step 3 step_time: 510 ms\n"
      "step 4 time_per_iteration 0.5\n";  // no ':' or '=': not this form
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "key");
  ASSERT_EQ(s.values.size(), 3u);
  EXPECT_DOUBLE_EQ(s.values[0], 0.52);
  EXPECT_DOUBLE_EQ(s.values[1], 0.48);
  EXPECT_DOUBLE_EQ(s.values[2], 0.51);
}

// The forms' edges, as the scanners read them: case, quotes, units, a key
// inside a longer word, a number with an exponent.
TEST(IterLog, KeyFormsWithAnyCaseQuotesAndExponents) {
  const std::string log =
      "ITER_TIME_MS = 500\n"
      "{\"step_time\": \"0.6\"}\n"
      "time_per_step=2.5e-1 s\n"
      "mystep_time=9 mystep_time_ms=9\n"  // inside a longer word: not the key
      "iteration_time: 700 MS\n";
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "key");
  EXPECT_EQ(s.values, (std::vector<double>{500 * 1e-3, 0.6, 2.5e-1, 700 * 1e-3}));
}

TEST(IterLog, TqdmTakesTheFirstRateInItsBracket) {
  const std::string log =
      "epoch 1 [warm-up] 5/10 [00:01<00:02, 4.00it/s]\n"  // a '[' with no n/total before it is passed
      "12/? [00:03, 1.50s/it]\n"                         // tqdm without a total
      "13/100 [00:03<01:00, 2e0 s/it, loss=1.25]\n"
      "14/100 [00:03<01:00, loss=1.25] 9.0s/it\n";      // a rate outside the bracket is not tqdm's
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "tqdm");
  EXPECT_EQ(s.values, (std::vector<double>{0.25, 1.5, 2.0}));
}

// Runs of digits where the formats' patterns once backtracked (20 s for a
// 7 KB line under ASan: the fuzzer's seed slow-tqdm-digits) read as numbers.
TEST(IterLog, LongRunsOfDigitsReadInOnePass) {
  const std::string digits(8000, '7');
  const auto tqdm = parse_iterations("1/2 [" + digits + " 2.5s/it]\n" + digits + "/3 [ 2s/it]\n", {});
  EXPECT_EQ(tqdm.format, "tqdm");
  EXPECT_EQ(tqdm.values.size(), 2u);
  EXPECT_EQ(tqdm.values.at(0), 2.5);
  const auto megatron = parse_iterations("elapsed time per iteration (ms): 1" + std::string(400, '0') + "\n", {});
  EXPECT_TRUE(megatron.values.empty()) << "1e400 ms is no time (infinite); " << megatron.note;
}

TEST(IterLog, ARegexReadsAnyOtherForm) {
  IterOptions o;
  o.regex = R"(took ([0-9.]+) ms)";
  o.regex_scale = 1e-3;
  check_iter_options(o);
  const auto s = parse_iterations("batch 1 took 250 ms\nbatch 2 took 260.5 ms\nnothing here\n", o);
  EXPECT_EQ(s.format, "regex");
  ASSERT_EQ(s.values.size(), 2u);
  EXPECT_DOUBLE_EQ(s.values[1], 0.2605);
  // A regex that matches nothing says so.
  EXPECT_NE(parse_iterations("x\n", o).note.find("no line matches --iter-regex"), std::string::npos);
}

TEST(IterLog, BadRegexesAreRefusedWithTheFix) {
  IterOptions o;
  o.regex = "took ([0-9.+ ms";
  EXPECT_THROW(check_iter_options(o), UsageError);
  o.regex = "took [0-9.]+ ms";
  try {
    check_iter_options(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no group; put the time in parentheses"), std::string::npos) << e.what();
  }
}

TEST(IterLog, NothingRecognisedSaysWhatWasLookedFor) {
  const auto s = parse_iterations("hello\nworld\n", {});
  EXPECT_TRUE(s.values.empty());
  EXPECT_NE(s.note.find("give --iter-regex"), std::string::npos) << s.note;
}

// A 180 KB line and a 200,000-digit number once ended diagnose with SIGSEGV:
// std::regex recurses once per character it matches and ran out of stack.
// Such lines are passed over and counted; the iterations around them stay.
TEST(IterLog, LinesTooLongForTheRegexArePassedOverAndCounted) {
  const std::string megatron = " iteration 1/ 10 | elapsed time per iteration (ms): 1500.0 |\n";
  const std::string log =
      megatron + std::string(180'000, 'x') + "\n" + "took " + std::string(200'000, '7') + " ms\n" + megatron;
  const auto s = parse_iterations(log, {});
  EXPECT_EQ(s.format, "megatron");
  EXPECT_EQ(s.values, (std::vector<double>{1.5, 1.5}));
  EXPECT_NE(s.note.find("2 lines of the log longer than 8192 bytes were not read (the first is line 2)"),
            std::string::npos)
      << s.note;
  const auto r = parse_iterations("took 12 ms\n" + std::string(200'000, '7') + "\n", {.regex = "took ([0-9.]+) ms"});
  EXPECT_EQ(r.values, (std::vector<double>{12.0}));
  EXPECT_NE(r.note.find("1 line of the log longer than 8192 bytes was not read"), std::string::npos) << r.note;
}

class GrowingLog : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("fb_iterlog_" + std::to_string(getpid()) + ".log");
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void append(double ms, int n) {
    std::ofstream out(path_, std::ios::app);
    for (int i = 0; i < n; ++i) out << " iteration " << i << " | elapsed time per iteration (ms): " << ms << " |\n";
  }
  std::filesystem::path path_;
};

TEST_F(GrowingLog, TheWindowReadsWhatWasWrittenDuringIt) {
  append(900, 30);  // before the window: slower warm-up steps
  IterLog log(path_.string(), {});
  EXPECT_EQ(log.error_at_start(), "");
  append(500, 8);
  const auto s = log.read();
  ASSERT_EQ(s.values.size(), 8u);
  EXPECT_DOUBLE_EQ(s.values.front(), 0.5);
  EXPECT_NE(s.note.find("8 iterations logged during the window"), std::string::npos) << s.note;
}

TEST_F(GrowingLog, TooFewNewLinesTakeTheTailAndSaySo) {
  append(700, 80);
  IterLog log(path_.string(), {});
  append(500, 2);
  const auto s = log.read();
  EXPECT_EQ(s.values.size(), kTailIterations);
  EXPECT_DOUBLE_EQ(s.values.back(), 0.5);
  EXPECT_NE(s.note.find("the log's last 50 of 82 iterations"), std::string::npos) << s.note;
}

TEST_F(GrowingLog, AMissingFileIsAMessageNotAnEnd) {
  IterLog log(path_.string(), {});
  EXPECT_NE(log.error_at_start().find("cannot read it now"), std::string::npos) << log.error_at_start();
  const auto missing = log.read();
  EXPECT_TRUE(missing.values.empty());
  EXPECT_NE(missing.error.find("cannot open it"), std::string::npos) << missing.error;
  // Created during the window: read at the end.
  IterLog later(path_.string(), {});
  append(400, 6);
  const auto s = later.read();
  EXPECT_EQ(s.values.size(), 6u);
  EXPECT_EQ(s.error, "");
}

TEST_F(GrowingLog, ALogWithoutIterationTimesIsAnErrorNamingTheFile) {
  std::ofstream(path_) << "just words\n";
  IterLog log(path_.string(), {});
  const auto s = log.read();
  EXPECT_NE(s.error.find(path_.string()), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("no iteration times found"), std::string::npos) << s.error;
}

}  // namespace
}  // namespace fb::diagnose
