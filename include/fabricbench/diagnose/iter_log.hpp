// Iteration times from a training job's log. Recognised without options:
//   megatron   "elapsed time per iteration (ms): 1234.5" (Megatron-LM's
//              training_log; each line is the mean over its log interval)
//   key        iter_time / iteration_time / step_time / time_per_iteration /
//              time_per_step (optionally _ms or _s), "key=0.52", "key: 0.52 s",
//              "\"key\": 520" in JSON lines; seconds unless the key or the
//              number says ms
//   deepspeed  "CurrSamplesPerSec=61.35" (DeepSpeed's ThroughputTimer): the
//              log has no batch size, so the figure is seconds per sample
//   tqdm       "[00:15<08:05,  2.00it/s]" or "1.95s/it" (the progress bar the
//              Hugging Face Trainer prints; tqdm smooths its rate)
// or any other form through a regular expression whose first group is the time.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fabricbench/diagnose/samples.hpp"

namespace fb::diagnose {

struct IterOptions {
  std::string regex;        // "" = recognise the formats above
  double regex_scale = 1;   // seconds per unit of the regex's number (ms: 1e-3)
};

// Throws fb::UsageError when `regex` does not compile or has no group.
void check_iter_options(const IterOptions& options);

// The iteration times in `text`: the format with the most lines (a regex
// when given). `values` is empty when nothing matched; `note` says what was
// looked for. Throws fb::UsageError when --iter-regex matching is given up
// on (a pattern that backtracks past FABRICBENCH_ITER_REGEX_TIMEOUT_S).
IterSeries parse_iterations(std::string_view text, const IterOptions& options);

// The iteration log while the job writes it: the size at the start, and at
// the end the part written since (or, when too little was written, the
// file's last entries, saying so). Never throws: an unreadable file gives a
// series with `error` set.
class IterLog {
 public:
  IterLog(std::string path, IterOptions options);
  // "" when the file could be opened at the start, else why not.
  [[nodiscard]] const std::string& error_at_start() const { return start_error_; }
  IterSeries read() const;

 private:
  std::string path_;
  IterOptions options_;
  std::optional<std::uintmax_t> start_size_;
  std::string start_error_;
};

// At least this many new iterations make the window's own; fewer, and the
// last kTailIterations of the file are used.
inline constexpr std::size_t kMinWindowIterations = 5;
inline constexpr std::size_t kTailIterations = 50;

}  // namespace fb::diagnose
