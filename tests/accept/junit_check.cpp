#include "junit_check.hpp"

#include "process.hpp"

namespace fb::test {

nlohmann::json junit_counts(const std::string& path) {
  const auto r =
      run_process(std::string(FB_PYTHON) + " " + FB_SOURCE_DIR + "/tests/accept/junit_counts.py '" + path + "'");
  if (r.exit_code != 0) return {{"problem", r.err.empty() ? "python exited " + std::to_string(r.exit_code) : r.err}};
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_discarded() ? nlohmann::json{{"problem", "unreadable output: " + r.out}} : j;
}

}  // namespace fb::test
