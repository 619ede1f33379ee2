// The built-in iteration-log formats (diagnose/iter_log.hpp lists them),
// read by hand-written scanners in time linear in the line. They were
// std::regex patterns: a number pattern that can split a run of digits two
// ways ([0-9]*\.?[0-9]+) under a lazy [^\]]*? or a greedy [0-9]+ tried at
// every start made a 7 KB line of digits take 20 s (the fuzzer's find), and
// each character matched costs a stack frame. Only --iter-regex, the user's
// own pattern, still goes through std::regex.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fb::diagnose::scan {

// The length of the number at `at` as [0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?
// reads it at its longest; 0 when there is none.
std::size_t number_length(std::string_view text, std::size_t at);

// Megatron-LM: "elapsed time per iteration (ms): 1234.5" -> milliseconds.
std::optional<double> megatron_ms(std::string_view line);

// DeepSpeed's ThroughputTimer: "CurrSamplesPerSec=61.35" -> samples per second.
std::optional<double> deepspeed_samples_per_s(std::string_view line);

// iter_time / iteration_time / step_time / time_per_iteration / time_per_step,
// optionally _ms or _s, then ':' or '=' and a number with an optional ms or s,
// quotes allowed (JSON lines) -> seconds.
std::optional<double> key_seconds(std::string_view line);

// tqdm's "n/total [elapsed<left, rate]" with rate "2.00s/it" or "4.00it/s"
// -> seconds per iteration; `n` is set to the iteration count n.
std::optional<double> tqdm_seconds(std::string_view line, std::string& n);

}  // namespace fb::diagnose::scan
