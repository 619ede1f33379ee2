// The watchdog's judgement on rank 0: from what every rank last reported,
// decide whether the run is hung, and say who is stuck where and who waits on
// them; or why else it ended (a lost rank, an error, a signal). Pure functions
// of the reported states, so they are tested without MPI or sockets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/watch_wire.hpp"

namespace fb::watch {

// How long one op may go without progress before it counts as a hang.
inline constexpr double kTimeoutFloorS = 60;       // automatic timeout: this floor ...
inline constexpr double kTimeoutBytesPerS = 1e9;   // ... plus what one iteration moves at 1 GB/s
// The shortest timeout a user may ask for: the watchdog's loops look every
// 0.1 s (kTickMs) and a rank reports its progress as often, so a timeout of a
// few ticks reads a rank that is merely scheduled late as hung (--timeout
// 0.001 ended runs with a false "lost rank").
inline constexpr double kTimeoutMinS = 1;

// A rank whose parent is silent waits this much longer than rank 0 waits for
// a silent rank: where both could end the job, rank 0 (which can say why in
// the record) does.
inline constexpr double kParentGraceS = 2;

struct TimeoutPolicy {
  double fixed_s = -1;  // > 0: this many seconds for every step; 0: no watchdog; < 0: automatic
  bool enabled() const { return fixed_s != 0; }
  double limit_s(std::uint64_t bytes_per_iteration) const;
  // A rank silent on the side channel this long counts as lost (its host may
  // be down); a rank whose parent (rank 0, its node leader) is silent this
  // long plus kParentGraceS ends the job itself.
  double silence_s() const { return fixed_s > 0 ? fixed_s : kTimeoutFloorS; }
  std::string describe() const;
};

// What rank 0 knows of one rank.
struct RankView {
  int rank = 0;
  std::string host;
  StateReport state;
  double age_s = 0;       // how long since it was last heard (its state is that old; the stall has grown since)
  bool reported = false;  // has sent a state at least once
  bool finished = false;  // said bye: its silence is expected
  bool lost = false;      // connection closed without bye, or silent too long
  std::string lost_why;
};

// How a run ended early, for the record's closing line and the message on stderr.
struct RunEnd {
  std::string status;   // hang, rank_lost, error, killed
  std::string message;  // for people: who, where, what to do
  JsonValue report;     // the watchdog's report (an object); null until one is made
  int exit_code = 3;
};

// Is the run hung? A rank inside an op (warm-up, timed, check) is judged on
// its own; ranks waiting in the engine's control collectives only count when
// every live rank has been stalled past its limit (a rank sitting out a long
// point-to-point measurement is waiting, not hung).
bool hang_detected(const std::vector<RankView>& ranks);

// Names who the others wait on: the ranks that stopped answering (silent
// for silent_after_s while others still answer: a frozen process, a host
// gone), else the ranks furthest behind.
RunEnd hang_end(const std::vector<RankView>& ranks, const TimeoutPolicy& policy);
// How long a rank must have been silent to count as the one not answering:
// far beyond the report period (a quarter second), within the timeout.
double silent_after_s(const TimeoutPolicy& policy);
RunEnd lost_end(const std::vector<RankView>& ranks);
// The report of a rank that stopped with an error: {rank, host, error}; the
// record's summary carries it (error_end's, and a command's own errors).
JsonValue error_report(int rank, const std::string& host, const std::string& error);
RunEnd error_end(int rank, const std::string& what, const std::vector<RankView>& ranks);
// `rank`: the first rank known to have received it.
RunEnd killed_end(int signal, int rank, const std::vector<RankView>& ranks);

// "all_reduce global 64 KiB out-of-place, timed iteration 7"
std::string describe(const ProgressSnapshot& at);
// "0-3,5"
std::string rank_list(const std::vector<int>& ranks);

}  // namespace fb::watch
