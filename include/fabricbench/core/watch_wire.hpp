// The watchdog's side channel protocol (see watchdog.hpp): small framed
// messages over TCP between each rank and rank 0, independent of MPI so that
// they still flow when the communicator is wedged.
//
// Frame: u32 little-endian length L (1 .. kMaxFrameBytes), then L bytes: a
// type byte and its payload. Integers are little-endian 64-bit.
//   hello    rank -> 0   token, rank          (authenticates the connection)
//   welcome  0 -> rank   token                (rank 0 is the one we meant)
//   state    rank -> 0   progress snapshot, seconds without progress, limit
//   bye      rank -> 0   the run finished on this rank: its silence is expected
//   fail     rank -> 0   an error stopped this rank: text
//   stop     0 -> rank   the run is being aborted: text
//   signal   rank -> 0   this rank got SIGTERM/SIGINT/SIGHUP and is going: number
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fabricbench/core/progress.hpp"

namespace fb::watch {

enum class MsgType : std::uint8_t { hello = 1, welcome = 2, state = 3, bye = 4, fail = 5, stop = 6, signal = 7 };

// A rank's state as it reports it: where it is, and its own judgement of how
// long it has been there (on its own clock, so hosts' clocks need not agree).
struct StateReport {
  ProgressSnapshot at;
  double stalled_s = 0;  // seconds since this rank's progress last moved
  double limit_s = 0;    // the timeout of its current step (0 = not timed)
};

struct Message {
  MsgType type = MsgType::state;
  std::uint64_t token = 0;  // hello, welcome
  int rank = -1;            // hello
  int signal = 0;           // signal
  StateReport state;        // state
  std::string text;         // fail, stop (cut to fit a frame)
};

inline constexpr std::size_t kMaxFrameBytes = 4096;

std::string encode(const Message& message);

// Reassembles messages from a byte stream. A malformed frame stops decoding
// for good and says why in error(): the peer is then dropped.
class Decoder {
 public:
  void feed(std::string_view bytes);
  // The next complete message; nullopt when more bytes are needed or after an error.
  std::optional<Message> next();
  const std::string& error() const { return error_; }

 private:
  std::optional<Message> fail(std::string why);
  std::string buffer_;
  std::size_t offset_ = 0;
  std::string error_;
};

}  // namespace fb::watch
