#include "alone.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "number_flags.hpp"

namespace fb::cli {

int run_alone(const char* command, CLI::App& app, const std::function<int()>& body) {
  refuse_nonsense_numbers(app);
  try {
    return body();
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    user_log().error("fabricbench {}: {}", command, e.what());
  } catch (const UsageError& e) {
    user_log().error("fabricbench {}: {}", command, e.what());
  }
  return kExitUsage;
}

int list_subcommands(const char* command, const CLI::App& app) {
  std::string text = fmt::format("fabricbench {}: {}\n\nusage: fabricbench {} <subcommand> [options]\n\nsubcommands:\n",
                                 command, app.get_description(), command);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    text += fmt::format("  {:<10} {}\n", sub->get_name(), sub->get_description());
  text += fmt::format("\n'fabricbench {} <subcommand> --help' shows a subcommand's options.\n", command);
  std::fputs(text.c_str(), stderr);
  return kExitUsage;
}

std::string subcommand_names(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    out += (out.empty() ? "" : ", ") + sub->get_name();
  return out;
}

}  // namespace fb::cli
