// `fabricbench storage`: parse and agree on the options, let the storage
// module make its folders and check the space, then run its patterns under
// the watchdog; rank 0 writes each `storage` line to the record, the CSV and
// the table as it is measured.
#include <fmt/format.h>

#include <optional>
#include <cstdio>

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
#include "measuring_command.hpp"

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

// storage's own part of the measuring sequence (measuring_command.hpp): the
// folders and their space, each pattern at each node count, and the files
// removed however the run ends.
class StorageCommand final : public Measuring {
 public:
  StorageCommand(const StorageFlags& flags, const StorageOptions& options) : flags_(flags), options_(options) {}
  void prepare() override {
    storage::use_reaper("/proc/self/exe");
    // Before the watchdog's: its thread takes the signals over while it runs.
    signals_.emplace();
    runner_.emplace(job().world, job().nodes, options_, job().run_id);
    runner_->prepare();
  }
  void refused(const std::string&) override {
    if (runner_) runner_->clean();
  }
  void watch(ProgressBoard& board) override {
    board_ = &board;
    runner_->watch(&board);
  }
  void open(RunHeader& header) override {
    header.options = storage::to_json(options_);
    if (!flags_.csv.empty())
      if (const std::string error = csv_.open(flags_.csv, flags_.overwrite, storage::csv_header()); !error.empty())
        throw RunError(error);
    if (flags_.quiet) return;
    for (const auto& t : runner_->targets()) std::fputs(storage::describe_target(t, job().nodes.nodes).c_str(), stdout);
    std::fputs(storage::table_header().c_str(), stdout);
    std::fflush(stdout);
  }
  void measure() override {
    // Every way the watchdog ends the run (hang, lost rank, error, signal)
    // goes through the board's abort hook: it removes the files.
    AbortHook hook(board_, storage::clean_all_workspaces);
    runner_->run([&](const StorageLine& line) {
      job().sinks.record_line(line);
      job().sinks.size_done();
      if (!flags_.csv.empty()) csv_.write_row(storage::csv_fields(line));
      lines_.push_back(line);
      if (!flags_.quiet) {
        std::fputs(storage::table_row(line).c_str(), stdout);
        std::fflush(stdout);
      }
    });
  }
  void measured() override { runner_->clean(); }
  Summary close(double seconds) override {
    seconds_ = seconds;
    if (!flags_.quiet) std::fputs(storage::table_notes(lines_).c_str(), stdout);
    Summary s;
    s.elapsed_s = seconds;
    s.exit_code = output_failure("storage", csv_.error(), kExitOk);
    return s;
  }
  int report(int code) override {
    user_log().info("fabricbench storage: {} rows, {:.1f} s{}{}", lines_.size(), seconds_,
                    flags_.out.empty() ? "" : ", record ", flags_.out);
    return code;
  }
  // The record's closing line is already written (one write); then the files.
  // The launcher's SIGKILL may follow its SIGTERM within a second (Open MPI:
  // odls_base_sigkill_timeout), and what a SIGKILL leaves the rank's reaper
  // removes (storage/reaper.hpp).
  void ended_early(const Summary&) noexcept override { storage::clean_all_workspaces(); }

 private:
  const StorageFlags& flags_;
  const StorageOptions& options_;
  std::optional<storage::SignalCleanup> signals_;
  std::optional<storage::StorageRunner> runner_;
  ProgressBoard* board_ = nullptr;
  CsvWriter csv_;
  std::vector<StorageLine> lines_;
  double seconds_ = 0;
};

}  // namespace

int storage_main(int argc, char** argv) {
  CLI::App app{"Shared-filesystem throughput from every node at once: large sequential and many small files, with "
               "and without O_DIRECT, at 1, 2, 4 ... nodes; per node and aggregate GB/s, IOPS, latency. Under "
               "mpirun or srun.",
               "fabricbench storage"};
  StorageFlags flags;
  add_flags(app, flags);
  StorageOptions options;
  const auto outputs = [&] { return Outputs{{{flags.out, "--out"}, {flags.csv, "--csv"}}, flags.overwrite}; };
  const auto verbosity = [&] {
    return flags.verbose ? Verbosity::verbose : flags.quiet ? Verbosity::quiet : Verbosity::normal;
  };
  return command_main(&argc, &argv, {"storage", app, [&] { options = resolve(flags); }, outputs, verbosity},
                      [&](const Comm& world) {
                        StorageCommand command(flags, options);
                        return measure(world, argc, argv,
                                       {.command = "storage",
                                        .timeout = watch::TimeoutPolicy{options.timeout_s},
                                        .record = flags.out,
                                        .overwrite = flags.overwrite},
                                       command);
                      });
}

}  // namespace fb::cli
