// Fault injection, for tests only (`fabricbench run --inject`): a backend
// decorator that makes one rank hang, die, fail, lie or lag at a chosen op
// and size, so that every detection is proven by a test:
//   hang     the rank stops before issuing the iteration  -> watchdog names it
//   kill     the rank SIGKILLs itself                      -> rank_lost, rows kept
//   error    the rank's backend call throws                -> status "error"
//   corrupt  `count` output elements flipped per iteration -> the check counts them
//   slow     the rank enters each iteration late, by (factor-1) x its own
//            previous iteration time                       -> slowest_rank
// Faults strike matching iterations (warm-up, timed and check iterations all
// count) on one world rank; `after` lets that many pass first. Ops that match
// no fault on this rank are the inner backend's own, untouched.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/backend.hpp"

namespace fb::fault {

enum class Kind { hang, kill, error, corrupt, slow };

struct Fault {
  Kind kind = Kind::hang;
  int rank = -1;                       // world rank it strikes
  std::optional<Op> op;                // only this op (default: any)
  std::optional<std::uint64_t> bytes;  // only rows of this many bytes (default: any)
  std::int64_t after = 0;              // matching iterations to let pass first
  double factor = 3;                   // slow: how many times longer an iteration takes
  std::uint64_t count = 1;             // corrupt: elements per iteration
  std::string text;                    // as given, for messages
};

// "hang:rank=2,op=all_reduce,bytes=1M". Throws UsageError naming --inject.
Fault parse_fault(std::string_view text);
// The syntax, for --help and error messages.
std::string fault_syntax();

std::unique_ptr<Backend> with_faults(std::unique_ptr<Backend> inner, std::vector<Fault> faults, int world_rank);

}  // namespace fb::fault
