#include "command_support.hpp"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/backends/library_versions.hpp"
#include "fabricbench/topo/report.hpp"
#include "fabricbench/core/log.hpp"
#include "number_flags.hpp"

namespace fb::cli {

int same_command_everywhere(const Comm& world, std::string_view command) {
  const std::string mine(command);
  const std::string first = world.bcast_string_quiet(mine, 0);
  const std::string error = agree_on_error(
      world, first == mine ? ""
                           : fmt::format("this rank runs 'fabricbench {}' but rank 0 runs 'fabricbench {}': launch "
                                         "every rank with the same subcommand and arguments",
                                         mine, first));
  if (error.empty()) return -1;
  return usage_exit(world, first, error);
}

namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return out;
}

// "maxbytes=\"64M\"" -> {"--maxbytes", "\"64M\""}; CLI11 writes one option per line.
std::pair<std::string, std::string> option_and_value(std::string_view line) {
  const auto eq = line.find('=');
  if (eq == std::string_view::npos) return {std::string(line), ""};
  return {"--" + std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))};
}

}  // namespace

std::string first_difference(const std::string& rank0, const std::string& mine) {
  const auto a = lines_of(rank0);
  const auto b = lines_of(mine);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string_view la = i < a.size() ? a[i] : std::string_view();
    const std::string_view lb = i < b.size() ? b[i] : std::string_view();
    if (la == lb) continue;
    const auto [name_a, value_a] = option_and_value(la);
    const auto [name_b, value_b] = option_and_value(lb);
    if (name_a == name_b) return fmt::format("{} is {} on rank 0 but {} here", name_a, value_a, value_b);
    return fmt::format("rank 0 has {} where this rank has {}", la.empty() ? "nothing" : std::string(la),
                       lb.empty() ? "nothing" : std::string(lb));
  }
  return {};
}

std::string compared_options(const CLI::App& app, const std::vector<std::string>& per_rank) {
  const std::string all = app.config_to_str(true, false);  // the lines below view into it
  std::string out;
  for (const std::string_view line : lines_of(all)) {
    const std::string name = option_and_value(line).first;
    bool skip = false;
    for (const auto& p : per_rank) skip = skip || name == "--" + p;
    if (!skip) out += std::string(line) + "\n";
  }
  return out;
}

std::string options_differ(const Comm& world, const std::string& mine) {
  const std::string rank0 = world.bcast_string_quiet(mine, 0);
  const std::string diff = rank0 == mine ? "" : first_difference(rank0, mine);
  return agree_on_error(world, diff.empty() ? "" : fmt::format("the options differ from rank 0's: {}; launch every "
                                                               "rank with the same arguments",
                                                               diff));
}

FlagsParsed parse_flags(CLI::App& app, int argc, char** argv) {
  FlagsParsed parsed;
  refuse_nonsense_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    parsed.shown = app.help();
  } catch (const ShowAndExit& show) {
    parsed.shown = show.text;
  } catch (const CLI::ParseError& e) {
    parsed.error = e.what();
  } catch (const UsageError& e) {  // a flag's own check
    parsed.error = e.what();
  }
  return parsed;
}

int agree_on_flags(const Comm& world, const FlagsParsed& parsed, const CLI::App& app, std::string_view command,
                   const std::function<void()>& validate, const std::function<Outputs()>& outputs,
                   const std::vector<std::string>& per_rank) {
  std::string error = parsed.error;
  std::optional<std::string> shown = parsed.shown;
  if (error.empty() && !shown) {
    try {
      validate();
    } catch (const ShowAndExit& show) {
      shown = show.text;
    } catch (const CLI::ParseError& e) {
      error = e.what();
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  error = agree_on_error(world, error);
  // Printing and exiting is agreed too: a rank that went on alone would wait
  // in the next collective for ranks that have left.
  if (error.empty()) {
    const auto ranks_shown = world.allgather_quiet(shown ? 1 : 0);
    const auto count = std::count(ranks_shown.begin(), ranks_shown.end(), 1);
    if (count == world.size()) {
      if (world.rank() == 0) std::fputs(shown->c_str(), stdout);
      return kExitOk;
    }
    if (count > 0)
      error = fmt::format(
          "{} of {} ranks were given a flag that only prints (--help) and the rest were not: give "
          "every rank the same command line",
          count, world.size());
  }
  // Every option's parsed value, defaults included, derived from the flags
  // themselves: a new flag is compared without anyone remembering to add it.
  if (error.empty()) error = options_differ(world, compared_options(app, per_rank));
  if (error.empty() && world.rank() == 0) {
    const Outputs out = outputs();
    error = check_outputs(out.files, out.overwrite);
  }
  error = agree_on_error(world, error);
  if (error.empty()) return -1;
  return usage_exit(world, command, error);
}

int parse_on_every_rank(const Comm& world, CLI::App& app, int argc, char** argv, std::string_view command,
                        const std::function<void()>& validate, const std::function<Outputs()>& outputs,
                        const std::vector<std::string>& per_rank) {
  return agree_on_flags(world, parse_flags(app, argc, argv), app, command, validate, outputs, per_rank);
}

void check_iteration_counts(int iters, int warmup) {
  if (iters < 1 || iters > kMaxIters)
    throw UsageError(fmt::format("--iters {}: 1 to {} timed iterations per size (each one's time is kept and "
                                 "summarized); for a longer soak repeat the sweep (run --duration S) or measure a larger size",
                                 iters, kMaxIters));
  if (warmup < 0 || warmup > kMaxIters)
    throw UsageError(fmt::format("--warmup_iters {}: 0 to {} warm-up iterations", warmup, kMaxIters));
}

int usage_exit(const Comm& world, std::string_view command, std::string_view message) {
  if (world.rank() == 0)
    user_log().error("fabricbench {}: {}", command, message);
  return kExitUsage;
}

int run_or_abort(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    Comm::world().abort(kExitRunError);
    return kExitRunError;
  }
}

JobInventory inventory_lines(const Comm& world, const NodeMap& nodes, int device_option) {
  auto inventory = topo::record_inventory(world, nodes, loaded_library_versions(), device_option);
  for (const auto& d : inventory.differences)
    spdlog::warn("ranks differ in {} ({} values): see fabricbench topo", d.attribute, d.values.size());
  return {std::move(inventory.lines), std::move(inventory.rank_domains)};
}

void add_overwrite_flag(CLI::App& app, bool& overwrite) {
  app.add_flag("--overwrite", overwrite, "replace output files that exist (without it an existing file is refused)");
}

int output_failure(std::string_view command, const std::string& error, int code) {
  if (error.empty()) return code;
  user_log().error("fabricbench {}: {}; the file ends at its last whole line", command, error);
  return kExitRunError;
}

std::unique_ptr<Backend> usable_backend(const Comm& world, const std::string& name) {
  const BackendInfo* info = find_backend(name);
  const std::string absent = agree_on_error(world, info ? info->absent_reason() : "unknown backend");
  if (absent.empty()) return info->make();
  throw UsageError(fmt::format("backend {} is not usable: {}", name, absent));
}

}  // namespace fb::cli
