// `fabricbench check` on rank 0 once the record exists: evaluate the rules,
// write check.json and junit.xml, and the placeholder that stands in for them
// while the run is going.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check_options.hpp"
#include "fabricbench/accept/profile.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/sink.hpp"

namespace fb::cli {

// What every rank agreed on before anything runs. `baseline` lives on rank 0.
struct CheckSetup {
  accept::Profile profile;
  std::string profile_path;
  CheckOutputs outputs;
  std::optional<Results> baseline;
};

// The record's rank count; -1 when its header has none (a hand-made file).
int header_ranks(const Results& r);

struct Judgement {
  int code = 0;
  std::string text;  // the verdict table and summary, printed once the sweep's own output is done
};

// Evaluates the record at `results_path` and writes check.json and junit.xml.
// `record` (the live run's sinks) gets the check lines; null with --results,
// where a record that did not finish (its summary says hang, rank_lost,
// error or killed, or it has none) is judged incomplete: exit 3, never a
// pass. `output_error`: the live run's record could not be written whole
// (a full disk), which makes it incomplete too.
Judgement judge(const CheckSetup& setup, const CheckFlags& flags, const std::string& results_path, double elapsed_s,
                RowSink* record, const std::string& output_error = "");

// Until the run ends, check.json and junit.xml say it did not finish: a job
// killed midway leaves an error for CI to read, not an old verdict.
// `hosts`: the job's nodes, each an unjudged JUnit testcase until the verdict.
// `why`: how the run ended, once the watchdog knows ("" at the start: not yet).
void write_placeholder(const CheckSetup& setup, const CheckFlags& flags, int ranks,
                       const std::vector<std::string>& hosts, const std::string& why = "");

// The same files for a run refused after they were started (a sweep the
// backend cannot run, a profile for more nodes): exit code 2 and why.
void write_refusal(const CheckSetup& setup, const CheckFlags& flags, int ranks, const std::vector<std::string>& hosts,
                   const std::string& why);

// --save-baseline: a copy of the finished record. "" or the problem.
[[nodiscard]] std::string copy_record(const std::string& from, const std::string& to);

}  // namespace fb::cli
