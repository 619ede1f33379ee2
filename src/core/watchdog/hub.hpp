// The parent's side of the watchdog's tree (rank 0, every node leader):
// listening sockets, the handshake of new connections, one connection per
// child, heartbeats down, and what the children send up, checked (a child
// speaks only for itself, or a leader for its node's ranks) before the
// owner sees it. Connections that are not this run's, or that send a
// malformed frame, are dropped at once and counted.
#pragma once

#include <poll.h>

#include <cstdint>
#include <string>
#include <vector>

#include "channel.hpp"
#include "tree.hpp"

namespace fb::watch {

class Hub {
 public:
  // What the owner hears, each with the time its bytes were read.
  struct Events {
    virtual ~Events() = default;
    virtual void joined(int child) = 0;
    virtual void message(int child, const Message& m, double now) = 0;
    // Closed or broken without a goodbye (bye, signal or leaving first).
    virtual void gone(int child, const std::string& why, double now) = 0;
  };

  Hub(const Tree& tree, int me, std::uint64_t token, std::vector<Fd> listeners);

  // Appends this hub's descriptors to `fds`; handle() reads their revents.
  void add_fds(std::vector<pollfd>& fds);
  // Call after every poll, whether it returned events or timed out: the
  // hub's timers run here too (a listener left alone while out of
  // descriptors is polled again once its back-off is over; a connection
  // that never says hello is dropped). Called on events only, a listener
  // backed off in a quiet set-up stayed out of poll, and every rank that
  // connected later waited out its 15 s handshake.
  void handle(const std::vector<pollfd>& fds, double now, Events& events);

  void send_all(const Message& m);  // to every child that has not said goodbye
  // Stop every child, then wait (up to `drain_s`) for them to hang up,
  // reading what they still send: closing with unread data would reset the
  // connection and could drop the stop before they read it. `signal`: the
  // one that ended the run (0: none), for each rank to end as killed by it.
  void stop_all(const std::string& why, double drain_s, int signal = 0);

  int missing() const;       // children not joined yet
  bool all_done() const;     // every child said goodbye or is gone
  const std::string& fd_error() const { return fd_error_; }  // out of descriptors: the message
  std::uint64_t dropped() const { return dropped_; }         // connections refused or dropped
  std::size_t connections() const;                           // open: children and pending

 private:
  struct Child {
    int rank = -1;
    Connection conn;
    bool joined = false;
    bool done = false;  // said goodbye: its silence, and its hanging up, are expected
  };
  struct Pending {
    Connection conn;
    double since_s = 0;
  };
  enum class Slot : std::uint8_t { listener, pending, child };

  Child* child(int rank);
  void accept_new(int listener, double now);
  void refuse(int fd, const std::string& why);
  // Refuses one waiting connection; false when it could not (then the
  // listeners rest, or close when no descriptor is left to refuse with).
  bool out_of_descriptors(int listener, double now);
  void read_pending(std::size_t i, double now, Events& events);
  void read_child(Child& c, double now, Events& events);
  void drop(Child& c, const std::string& why, double now, Events& events);
  bool accepts(const Child& c, const Message& m, std::string& why) const;

  const Tree& tree_;
  int me_;
  std::uint64_t token_;
  std::vector<Fd> listeners_;
  std::vector<Child> children_;  // sorted by rank
  std::vector<Pending> pending_;
  Fd reserve_;  // held back so that a full descriptor table can still answer "no" (EMFILE)
  double listen_again_s_ = 0;
  std::string fd_error_;
  std::uint64_t dropped_ = 0;
  // Where add_fds put what, for handle().
  std::size_t first_fd_ = 0;
  std::vector<std::pair<Slot, std::size_t>> slots_;
};

}  // namespace fb::watch
