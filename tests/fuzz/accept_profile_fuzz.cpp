// The acceptance-profile parser (fb::accept::parse_profile) on any text. The
// documented refusal is fb::UsageError naming the line and key; anything else
// escaping (a YAML::Exception, std::out_of_range, a crash, UB, a leak) is a
// finding.
#include <string_view>

#include "fabricbench/accept/profile.hpp"
#include "fabricbench/core/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)fb::accept::parse_profile(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const fb::UsageError&) {
  }
  return 0;
}
