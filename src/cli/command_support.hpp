// What every MPI subcommand does the same way before it measures: parse the
// flags on every rank and stop all ranks together with one message on bad
// input, and find a usable backend.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/output_file.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"

namespace fb::cli {

// The files rank 0 will write, and whether --overwrite lets them replace
// existing files (fabricbench/core/output_file.hpp).
struct Outputs {
  std::vector<OutputPath> files;
  bool overwrite = false;
};

// Collective, the first thing every MPI command does after MPI_Init: rank 0
// tells its subcommand and every rank compares. Ranks launched with different
// subcommands (an MPMD line such as `mpirun -np 1 fabricbench run : -np 1
// fabricbench topo`) would otherwise enter different collectives and hang or
// crash. Returns the exit code to stop with (kExitUsage, rank 0 prints which
// ranks run what), or -1 to go on.
int same_command_everywhere(const Comm& world, std::string_view command);

// Thrown by a command's validate() for a flag that only prints something
// (check --list-profiles): rank 0 prints `text`, every rank exits 0.
struct ShowAndExit {
  std::string text;
};

// --overwrite, for every command that writes files.
void add_overwrite_flag(CLI::App& app, bool& overwrite);

// Parses on every rank; any rank's error stops every rank with one message
// from rank 0 ("fabricbench <command>: ..."). `validate` checks the parsed
// flags (throwing UsageError). Then every rank compares its parsed options
// (every option's value, defaults included, as CLI11 writes them) with rank
// 0's: a launcher that passes different arguments to different ranks would
// otherwise hang or compare unlike with unlike; the message names the first
// option that differs. `outputs` lists the files rank 0 will write: each must
// be writable, none may exist without --overwrite, no two on one path.
// Returns the exit code to stop with, or -1 to go on.
// `per_rank`: options left out of the comparison (compared_options).
int parse_on_every_rank(const Comm& world, CLI::App& app, int argc, char** argv, std::string_view command,
                        const std::function<void()>& validate, const std::function<Outputs()>& outputs,
                        const std::vector<std::string>& per_rank = {});

// parse_on_every_rank in two halves, for a command whose MPI thread level
// follows its flags: parse_flags parses on this rank alone, before MPI_Init
// (no MPI: CLI11's own errors and --help are kept, not raised);
// agree_on_flags does the rest (validate, the agreement) once MPI runs.
struct FlagsParsed {
  std::string error;                 // a flag CLI11 or the flag's own check refused
  std::optional<std::string> shown;  // --help, or a flag that only prints (ShowAndExit)
  bool ok() const { return error.empty() && !shown; }
};
FlagsParsed parse_flags(CLI::App& app, int argc, char** argv);
int agree_on_flags(const Comm& world, const FlagsParsed& parsed, const CLI::App& app, std::string_view command,
                   const std::function<void()>& validate, const std::function<Outputs()>& outputs,
                   const std::vector<std::string>& per_rank = {});

// The text ranks compare: every option of `app` as CLI11 writes its parsed
// value (one per line, defaults included), less the options in `per_rank`,
// which legitimately differ between ranks (topo's --sysfs-root: each node's
// own copied tree).
std::string compared_options(const CLI::App& app, const std::vector<std::string>& per_rank = {});

// Collective: "" when `mine` (one option per line) equals rank 0's on every
// rank, else on every rank the message naming the first option that differs
// on the lowest such rank.
[[nodiscard]] std::string options_differ(const Comm& world, const std::string& mine);
// The first line where `rank0` and `mine` differ, as "--name: 'a' on rank 0, 'b' here".
std::string first_difference(const std::string& rank0, const std::string& mine);

// -n and -w of run and pairs: 1..kMaxIters timed, 0..kMaxIters warm-up
// iterations; throws UsageError naming the flag and the limit.
void check_iteration_counts(int iters, int warmup);

// Bad input found after parsing, alike on every rank: rank 0 prints
// "fabricbench <command>: <message>"; returns kExitUsage for every rank.
int usage_exit(const Comm& world, std::string_view command, std::string_view message);

// Runs the command's measuring part. A failure on this rank (a backend call
// that threw) may leave the other ranks blocked in the same operation, so it
// stops the whole job: logged, then MPI_Abort with kExitRunError.
int run_or_abort(const std::function<int()>& body);

// Collective: every rank's inventory, for the lines right after a record's
// header (docs/results-schema.md, `inventory`). Rank 0 warns when ranks differ.
// `device_option`: the command's --device (-1: none): each rank's GPU in its line follows it.
// Also every rank's NVLink domain key (on every rank), for the domain scope.
struct JobInventory {
  std::vector<InventoryLine> lines;       // rank 0's; empty elsewhere
  std::vector<std::string> rank_domains;  // NodeMap::rank_domain
};
JobInventory inventory_lines(const Comm& world, const NodeMap& nodes, int device_option = -1);

// Rank 0, at the end of a command that wrote files: the first write error of
// `error` ("" = none) printed as "fabricbench <command>: ...", and the exit
// code it makes (kExitRunError), else `code` unchanged.
int output_failure(std::string_view command, const std::string& error, int code);

// Collective: the backend called `name` when every rank can use it; else
// UsageError on every rank saying why.
std::unique_ptr<Backend> usable_backend(const Comm& world, const std::string& name);

}  // namespace fb::cli
