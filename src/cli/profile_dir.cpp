// Where `check` finds the shipped profiles. The paths below are compiled into
// this file alone (src/cli/CMakeLists.txt), so no other object of the CLI
// carries the checkout's path.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "check_options.hpp"
#include "fabricbench/core/install_layout.hpp"

namespace fb::cli {

ProfileDir find_profile_dir() {
  if (const char* env = std::getenv("FABRICBENCH_PROFILES"); env && *env) return {env, "FABRICBENCH_PROFILES"};
  const std::string bin = binary_dir();
  if (bin.empty()) return {"", "the binary's folder is unknown (/proc/self/exe unreadable): set FABRICBENCH_PROFILES"};
  // The build tree's binary reads the checkout's profiles, so an edit there
  // counts at once; any other copy (installed, unpacked from the .deb, moved)
  // reads the folder beside it and never reaches back into a checkout.
  std::error_code ec;
  if (std::filesystem::equivalent(bin, FB_BUILD_DIR, ec)) return {FB_SOURCE_PROFILE_DIR, "the source tree"};
  return {(std::filesystem::path(bin) / FB_INSTALLED_PROFILE_DIR).lexically_normal().string(),
          "installed beside " + bin};
}

}  // namespace fb::cli
