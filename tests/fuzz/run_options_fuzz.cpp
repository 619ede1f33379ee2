// fabricbench run's options: arguments (split at NUL bytes) through CLI11
// and resolve(). Refusals are CLI::ParseError or UsageError; anything else
// escaping (a crash, std::out_of_range...) is a finding.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fabricbench/core/errors.hpp"
#include "fuzz_input.hpp"
#include "run_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fb::fuzz::Input in(data, size);
  std::vector<std::string> args;
  while (!in.empty() && args.size() < 64) args.push_back(in.text());
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  CLI::App app;
  fb::cli::RunFlags flags;
  fb::cli::add_run_flags(app, flags);
  try {
    app.parse(args);
    const fb::RunOptions o = fb::cli::resolve(flags);
    (void)app.config_to_str(true, false);  // what ranks compare
    (void)fb::to_json(o).get().dump();
  } catch (const CLI::ParseError&) {
  } catch (const fb::UsageError&) {
  }
  return 0;
}
