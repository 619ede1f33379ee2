#include "alone.hpp"

#include <cstdio>

#include "fabricbench/core/errors.hpp"

namespace fb::cli {

int run_alone(const char* command, const CLI::App& app, const std::function<int()>& body) {
  try {
    return body();
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "fabricbench %s: %s\n", command, e.what());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "fabricbench %s: %s\n", command, e.what());
  }
  return kExitUsage;
}

}  // namespace fb::cli
