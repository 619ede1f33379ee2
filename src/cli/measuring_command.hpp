// The sequence every measuring command (run, check, pairs, step, storage,
// gemm) goes through, owned here once so the commands cannot drift apart:
//   entry    the flags parsed (before MPI_Init: they choose its thread
//            level), MPI, the same subcommand on every rank, the flags
//            checked and agreed on every rank (agree_on_flags), logging;
//   measure  the node map and run id, the backend with its planted faults,
//            the command's own preparation (any rank's refusal agreed: exit 2
//            on every rank), the hang watchdog, the command's watched
//            preparation (refused alike), the inventory and the header,
//            the record and the sinks on rank 0, the watched measurement,
//            the command's closing line, output failures (exit 3), and rank
//            0's exit code handed to every rank.
// A command supplies only what is its own, as a Measuring.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "command_support.hpp"
#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sinks.hpp"
#include "fabricbench/core/watch_report.hpp"

namespace fb::cli {

// What the entry needs of a command: how it parses and checks its flags.
// topo (which measures nothing) goes through the same entry.
struct CommandEntry {
  std::string_view command;  // "run": every message starts "fabricbench run: "
  CLI::App& app;
  std::function<void()> validate;    // throws UsageError (or ShowAndExit)
  std::function<Outputs()> outputs;  // the files rank 0 will write
  std::function<Verbosity()> verbosity;
  std::vector<std::string> per_rank{};  // options that legitimately differ between ranks (compared_options)
  // With the flags parsed (before MPI_Init, before `validate`): whether the
  // command will run the watchdog (unless --timeout 0), its only thread but
  // for the closer (watch_host.hpp). The watchdog runs in a process of its
  // own, forked then, and MPI at MPI_THREAD_SINGLE, which Open MPI serves
  // without its locks; where the process cannot be forked, on a thread, at
  // MPI_THREAD_FUNNELED. Unset, or throwing: the command runs threads of its
  // own (MPI_THREAD_FUNNELED).
  std::function<bool()> watchdog{};
};

// Collective from MPI_Init to the exit code: `body` runs once the flags are
// parsed and agreed, under run_or_abort (an exception on one rank ends the job).
int command_main(int* argc, char*** argv, const CommandEntry& entry, const std::function<int(const Comm&)>& body);

// What the sequence needs to know of a command's parsed flags.
struct MeasuringPlan {
  std::string command;
  std::string backend{};              // the data plane; "" for a command without one (storage, gemm)
  std::vector<std::string> inject{};  // --inject: faults planted in the backend (tests only)
  watch::TimeoutPolicy timeout;
  int device = -1;     // --device, for each rank's GPU in the inventory
  std::string record;  // --out: the record rank 0 writes; "" for none
  bool overwrite = false;
  ClosingTotals totals = ClosingTotals::none;  // what an early end counts into the closing line
};

// A measuring command's own parts, called in this order by measure().
class Measuring {
 public:
  struct Job {
    const Comm& world;
    const NodeMap& nodes;
    const std::string& run_id;   // the same on every rank
    SinkList& sinks;             // rank 0's sinks, the record first; empty on the other ranks
    Backend* backend = nullptr;  // null for a command without one
    // Every world rank's NVLink domain key (NodeMap::rank_domain), read with
    // the inventory: set before measure(), for the domain scope.
    std::vector<std::string> rank_domains{};
  };
  virtual ~Measuring() = default;

  // Collective, before anything is measured or written: make what the
  // measurement needs and refuse what cannot run by throwing UsageError
  // (agreed: one rank's refusal ends every rank with exit 2).
  virtual void prepare() = 0;
  // The run was refused before it started (`why`, on every rank): undo what
  // prepare() set up; rank 0 may say so in the command's own outputs.
  virtual void refused(const std::string& /*why*/) {}
  // Every part that measures publishes its progress to `board`, for the watchdog.
  virtual void watch(ProgressBoard& board) = 0;
  // Collective, once the watchdog watches `board` and before the record is
  // opened: what may hang before anything is measured (step: NCCL's
  // initialisation of the groups it keeps for the whole run). Refuses like
  // prepare(): one rank's UsageError ends every rank with exit 2, no record
  // written; a hang ends with the timeout (exit 3).
  virtual void prepare_watched() {}
  // Rank 0: the sinks beside the record (table, progress, CSV), and the
  // header's own part (options, profile).
  virtual void open(RunHeader& /*header*/) {}
  // Collective and watched: the measurement; rank 0 writes into job().sinks.
  virtual void measure() = 0;
  // Every rank, once every rank has finished measuring.
  virtual void measured() {}
  // Rank 0: the lines that come after the measurement, and the closing line
  // with the command's figures and its exit code (before output failures).
  virtual Summary close(double seconds) = 0;
  // Rank 0, once the record is sealed with `code`: what is printed last.
  // Returns the exit code (a file the command writes after the record may fail).
  virtual int report(int code) { return code; }
  // Rank 0, on the watchdog's thread, once the record is closed early (hang,
  // lost rank, error, signal): thread-safe, no MPI, no throw.
  virtual void ended_early(const Summary& /*summary*/) noexcept {}

 protected:
  const Job& job() const { return *job_; }

 private:
  friend int measure(const Comm&, int, char**, const MeasuringPlan&, Measuring&);
  const Job* job_ = nullptr;
};

// Collective: the whole measuring sequence. Returns the exit code every rank
// ends with: rank 0's, which alone knows the rows and whether its files were written.
int measure(const Comm& world, int argc, char** argv, const MeasuringPlan& plan, Measuring& command);

// Where the start goes (-v, rank 0): the phase's time since the previous
// mark, logged with the record header and at the end (bench/scripts/bench-startup.sh).
void startup_mark(const char* phase);

}  // namespace fb::cli
