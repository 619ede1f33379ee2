// user_log(): the messages commands give the person running them reach
// stderr exactly as written, with no rank or level prefix, even under -q
// (the default logger's warn level), so moving them from fprintf to spdlog
// changed no byte of what a user or a script reads.
#include <gtest/gtest.h>

#include "fabricbench/core/log.hpp"

namespace fb {
namespace {

TEST(UserLog, WritesTheTextAsItIsWhateverTheVerbosity) {
  setup_logging(3, Verbosity::quiet);
  testing::internal::CaptureStderr();
  user_log().info("fabricbench run: {} rows, {:.1f} s", 12, 3.26);
  user_log().error("fabricbench: unknown command '{}'\n", "frob");
  spdlog::info("dropped: quiet keeps warnings");
  spdlog::warn("kept");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "fabricbench run: 12 rows, 3.3 s\n"
            "fabricbench: unknown command 'frob'\n\n"
            "[fabricbench rank 3] warning: kept\n");
  setup_logging(0, Verbosity::normal);
}

}  // namespace
}  // namespace fb
