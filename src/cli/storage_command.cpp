// `fabricbench storage`: parse and agree on the options, let the storage
// module make its folders and check the space, then run its patterns under
// the watchdog; rank 0 writes each `storage` line to the record, the CSV and
// the table as it is measured.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/core/csv.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/storage/reaper.hpp"
#include "fabricbench/storage/report.hpp"
#include "fabricbench/storage/runner.hpp"
#include "fabricbench/storage/signals.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "watched_run.hpp"

namespace fb::cli {
namespace {

using storage::StorageOptions;

struct StorageFlags {
  std::string path;
  std::string local;
  std::vector<int> nodes;
  std::vector<std::string> patterns{"seq", "small"};
  std::vector<std::string> block_sizes{"1M", "16M"};
  std::string bytes = "1G";
  std::uint64_t files = 1024;
  std::string file_bytes = "128K";
  std::string direct = "both";
  bool one_per_node = false;
  std::string out;
  std::string csv;
  bool overwrite = false;
  bool quiet = false;
  bool verbose = false;
  std::string timeout = "auto";
};

void add_flags(CLI::App& app, StorageFlags& f) {
  app.add_option("--path", f.path, "folder on the shared filesystem to measure (its files go into a subfolder, "
                                   "removed afterwards)")
      ->required();
  app.add_option("--local", f.local, "a node-local folder (NVMe scratch) measured beside it, every node at once");
  app.add_option("--nodes", f.nodes, "node counts doing I/O at once, comma-separated (default 1, 2, 4 ... all)")
      ->delimiter(',');
  app.add_option("--patterns", f.patterns, "seq (one large file in blocks), small (many small files), or both")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--block-sizes", f.block_sizes, "blocks of the sequential pattern, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--bytes", f.bytes, "the sequential file per rank")->capture_default_str();
  app.add_option("--files", f.files, "small files per rank")->capture_default_str();
  app.add_option("--file-bytes", f.file_bytes, "bytes per small file")->capture_default_str();
  app.add_option("--direct", f.direct, "on (O_DIRECT), off (buffered, page cache dropped before reading) or both")
      ->capture_default_str();
  app.add_flag("--one-per-node", f.one_per_node, "only each node's first rank does I/O (default: every rank)");
  app.add_option("--out", f.out, "write the record (JSON Lines: storage lines)")->check(output_path_validator());
  app.add_option("--csv", f.csv, "write the rows as CSV")->check(output_path_validator());
  add_overwrite_flag(app, f.overwrite);
  app.add_flag("-q,--quiet", f.quiet, "no table: only errors and the closing line");
  app.add_flag("-v,--verbose", f.verbose, "debug logging");
  add_timeout_option(app, f.timeout);
}

std::vector<storage::Mode> modes_of(const std::string& direct) {
  if (direct == "both") return {storage::Mode::direct, storage::Mode::buffered};
  if (direct == "on") return {storage::Mode::direct};
  if (direct == "off") return {storage::Mode::buffered};
  throw UsageError(fmt::format("--direct '{}': use on, off or both", direct));
}

StorageOptions resolve(const StorageFlags& f) {
  StorageOptions o;
  o.path = f.path;
  o.local = f.local;
  o.node_counts = f.nodes;
  o.sequential = o.small_files = false;
  for (const auto& p : f.patterns) {
    if (p == "seq") {
      o.sequential = true;
    } else if (p == "small") {
      o.small_files = true;
    } else {
      throw UsageError(fmt::format("--patterns '{}': use seq, small or both (seq,small)", p));
    }
  }
  o.block_sizes.clear();
  for (const auto& b : f.block_sizes) o.block_sizes.push_back(parse_bytes(b, "--block-sizes"));
  o.bytes = parse_bytes(f.bytes, "--bytes");
  o.files = f.files;
  o.file_bytes = parse_bytes(f.file_bytes, "--file-bytes");
  o.modes = modes_of(f.direct);
  o.one_per_node = f.one_per_node;
  o.timeout_s = timeout_seconds(f.timeout);
  if (!o.local.empty() && o.local == o.path) throw UsageError("--local is the same folder as --path: give a node-local one");
  storage::validate(o);
  return o;
}

int execute(const Comm& world, int argc, char** argv, const StorageFlags& flags, const StorageOptions& options) {
  const NodeMap nodes = map_nodes(world);
  const std::string run_id = shared_run_id(world);
  storage::use_reaper("/proc/self/exe");
  // Before the watchdog's: its thread takes the signals over while it runs.
  storage::SignalCleanup signals;
  storage::StorageRunner runner(world, nodes, options, run_id);
  RecordWriter record;  // before the watchdog, which may seal it
  CsvWriter csv;
  std::unique_ptr<WatchedRun> watched;
  try {
    runner.prepare();
    watched = std::make_unique<WatchedRun>(world, nodes, watch::TimeoutPolicy{options.timeout_s}, "storage");
  } catch (const UsageError& e) {
    runner.clean();
    return usage_exit(world, "storage", e.what());
  }
  // Every way the watchdog ends the run (hang, lost rank, error, signal)
  // goes through the board's abort hook: it removes the files.
  const auto hook = storage::abort_hook();
  ActiveGroup active(&watched->board(), hook.get());
  runner.watch(&watched->board());
  std::vector<StorageLine> lines;
  auto started = std::chrono::steady_clock::now();
  watched->run([&] {
    const auto inventory = inventory_lines(world, nodes);
    started = std::chrono::steady_clock::now();
    if (world.rank() == 0) {
      if (!flags.out.empty()) {
        if (const std::string error = record.open(flags.out, flags.overwrite); !error.empty()) throw RunError(error);
        auto header = record_header("storage", argc, argv, world, nodes, run_id);
        header.options = storage::to_json(options);
        record.write(header);
        for (const auto& line : inventory) record.write(line);
      }
      // An early end: the record's closing line first (one write), then the
      // files; the launcher's SIGKILL may follow its SIGTERM within a second
      // (Open MPI: odls_base_sigkill_timeout), and what a SIGKILL leaves the
      // rank's reaper removes (storage/reaper.hpp).
      watched->arm([&record, &flags](const Summary& summary) {
        if (!flags.out.empty()) record.seal(summary);
        storage::clean_all_workspaces();
      });
      if (!flags.csv.empty())
        if (const std::string error = csv.open(flags.csv, flags.overwrite, storage::csv_header()); !error.empty())
          throw RunError(error);
      if (!flags.quiet) {
        for (const auto& t : runner.targets()) std::fputs(storage::describe_target(t, nodes.nodes).c_str(), stdout);
        std::fputs(storage::table_header().c_str(), stdout);
        std::fflush(stdout);
      }
    }
    runner.run([&](const StorageLine& line) {
      record.write(line);
      record.sync();
      if (!flags.csv.empty()) csv.write_row(storage::csv_fields(line));
      lines.push_back(line);
      if (!flags.quiet) {
        std::fputs(storage::table_row(line).c_str(), stdout);
        std::fflush(stdout);
      }
    });
  });
  runner.clean();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::int64_t exit_code = kExitOk;
  if (world.rank() == 0) {
    if (!flags.quiet) std::fputs(storage::table_notes(lines).c_str(), stdout);
    std::string error = record.error();
    if (error.empty()) error = csv.error();
    int code = output_failure("storage", error, kExitOk);
    Summary s;
    s.elapsed_s = seconds;
    s.exit_code = code;
    if (!flags.out.empty()) record.seal(s);
    if (code != kExitRunError) code = output_failure("storage", record.error(), code);
    user_log().info("fabricbench storage: {} rows, {:.1f} s{}{}", lines.size(), seconds,
                    flags.out.empty() ? "" : ", record ", flags.out);
    exit_code = code;
  }
  world.bcast_quiet({&exit_code, 1}, 0);
  return static_cast<int>(exit_code);
}

}  // namespace

int storage_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, "storage"); stop >= 0) return stop;
  CLI::App app{"Shared-filesystem throughput from every node at once: large sequential and many small files, with "
               "and without O_DIRECT, at 1, 2, 4 ... nodes; per node and aggregate GB/s, IOPS, latency. Under "
               "mpirun or srun.",
               "fabricbench storage"};
  StorageFlags flags;
  add_flags(app, flags);
  StorageOptions options;
  const int stop = parse_on_every_rank(
      world, app, argc, argv, "storage", [&] { options = resolve(flags); },
      [&] { return Outputs{{{flags.out, "--out"}, {flags.csv, "--csv"}}, flags.overwrite}; });
  if (stop >= 0) return stop;
  setup_logging(world.rank(), flags.verbose ? Verbosity::verbose : flags.quiet ? Verbosity::quiet : Verbosity::normal);
  return run_or_abort([&] { return execute(world, argc, argv, flags, options); });
}

}  // namespace fb::cli
