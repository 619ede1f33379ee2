// The watchdog's side channel protocol (see watchdog.hpp): small framed
// messages over the watchdog's tree of sockets, independent of MPI so that
// they still flow when the communicator is wedged.
//
// The tree: each node's ranks talk to their node leader (the node's lowest
// rank) over a local socket; the leaders talk to rank 0 over TCP. Rank 0 is
// node 0's leader. "Up" goes from a rank towards rank 0, "down" away from it.
//
// Frame: u32 little-endian length L (1 .. kMaxFrameBytes), then L bytes: a
// type byte and its payload. Integers are little-endian 64-bit. Every up
// message names the rank it is about: a leader forwards its node's ranks'.
//   hello    up    token, rank            (authenticates the connection)
//   welcome  down  token                  (the parent is the one we meant)
//   state    up    rank, age, progress snapshot, seconds without progress, limit
//   bye      up    rank: the run finished there, its silence is expected
//   fail     up    rank, text: an error stopped that rank
//   stop     down  signal, text: the run is being aborted (also: a refused connection); signal:
//                  the one that ended the run (SIGTERM...), 0 for none, so every rank ends as killed by it
//   signal   up    rank, number: that rank got SIGTERM/SIGINT/SIGHUP and is going
//   beat     down  the parent is alive (four times a second)
//   lost     up    rank, text: a leader lost that rank's connection
//   leaving  up    rank, text: that rank ends the job because its parent fell silent
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fabricbench/core/progress.hpp"

namespace fb::watch {

enum class MsgType : std::uint8_t {
  hello = 1,
  welcome = 2,
  state = 3,
  bye = 4,
  fail = 5,
  stop = 6,
  signal = 7,
  beat = 8,
  lost = 9,
  leaving = 10,
};
inline constexpr int kMsgTypeCount = 10;
// Which way a message type travels: a peer sending the other kind is broken.
bool travels_up(MsgType type);

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
  int rank = -1;            // hello and every up message: the rank it is about
  int signal = 0;           // signal; stop: the signal that ended the run, 0 for none
  double age_s = 0;         // state: how long ago the sender heard it from that rank (0: its own)
  StateReport state;        // state
  std::string text;         // fail, stop, lost, leaving (cut to fit a frame)
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
