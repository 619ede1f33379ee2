#include "command_support.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/topo/report.hpp"

namespace fb::cli {

int parse_on_every_rank(const Comm& world, CLI::App& app, int argc, char** argv, std::string_view command,
                        const std::function<std::string()>& resolve,
                        const std::function<Outputs()>& outputs) {
  std::string error;
  std::string canonical;
  try {
    app.parse(argc, argv);
    canonical = resolve();
  } catch (const CLI::CallForHelp&) {
    if (world.rank() == 0) std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    error = e.what();
  } catch (const UsageError& e) {
    error = e.what();
  }
  error = agree_on_error(world, error);
  if (error.empty()) {
    std::int64_t hash = static_cast<std::int64_t>(fnv1a(canonical) >> 1);
    std::int64_t root_hash = hash;
    world.bcast_quiet({&root_hash, 1}, 0);
    error = agree_on_error(world, root_hash == hash ? "" : "the options differ from rank 0's: launch every rank "
                                                           "with the same arguments");
  }
  if (error.empty() && world.rank() == 0) {
    const Outputs out = outputs();
    error = check_outputs(out.files, out.overwrite);
  }
  error = agree_on_error(world, error);
  if (error.empty()) return -1;
  return usage_exit(world, command, error);
}

int usage_exit(const Comm& world, std::string_view command, std::string_view message) {
  if (world.rank() == 0)
    std::fprintf(stderr, "fabricbench %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
                 static_cast<int>(message.size()), message.data());
  return kExitUsage;
}

int run_or_abort(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitRunError);
    return kExitRunError;
  }
}

std::vector<InventoryLine> inventory_lines(const Comm& world, const NodeMap& nodes) {
  const auto inventory = topo::gather_inventory(world, nodes);
  if (world.rank() == 0)
    for (const auto& d : topo::find_differences(inventory))
      spdlog::warn("ranks differ in {} ({} values): see fabricbench topo", d.attribute, d.values.size());
  std::vector<InventoryLine> lines;
  for (const auto& line : inventory) lines.push_back(inventory_line(line));
  return lines;
}

void add_overwrite_flag(CLI::App& app, bool& overwrite) {
  app.add_flag("--overwrite", overwrite, "replace output files that exist (without it an existing file is refused)");
}

int output_failure(std::string_view command, const std::string& error, int code) {
  if (error.empty()) return code;
  std::fprintf(stderr, "fabricbench %.*s: %s; the file ends at its last whole line\n", static_cast<int>(command.size()),
               command.data(), error.c_str());
  return kExitRunError;
}

std::unique_ptr<Backend> usable_backend(const Comm& world, const std::string& name, std::string_view command) {
  const BackendInfo* info = find_backend(name);
  const std::string absent = agree_on_error(world, info ? info->absent_reason() : "unknown backend");
  if (absent.empty()) return info->make();
  if (world.rank() == 0)
    std::fprintf(stderr, "fabricbench %.*s: backend %s is not usable: %s\n", static_cast<int>(command.size()),
                 command.data(), name.c_str(), absent.c_str());
  return nullptr;
}

}  // namespace fb::cli
