// One rank's watchdog: its sockets set up and its thread (the monitor on
// rank 0, a relay elsewhere), steered by the engine's thread. The set-up
// steps take what MPI exchanged as plain values, so tests and the scale
// simulation (tests/scale) build whole jobs of agents without a launcher.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "watchdog_impl.hpp"

namespace fb::watch {

// Rank 0's listening sockets and what the other ranks need to reach them.
struct RootListeners {
  std::vector<Fd> tcp;
  Endpoint endpoint;
};
// TCP on `addresses` (when there are other nodes, or the user chose them);
// throws std::runtime_error naming the address and the fix.
RootListeners listen_root(const Tree& tree, std::uint64_t token, const std::string& host,
                          const std::vector<std::string>& addresses, bool chosen);
// The local socket of a leader whose node has other ranks; invalid otherwise.
Fd listen_node(const Tree& tree, int rank, std::uint64_t token);
// A leader connects to rank 0 over TCP, any other rank to its leader's
// local socket. Returns the error, "" when connected.
[[nodiscard]] std::string connect_parent(const Tree& tree, int rank, const Endpoint& root, const std::string& my_host,
                                         Connection& out);

class Agent {
 public:
  // Starts the thread in set-up: it accepts this rank's children (if any)
  // but judges nothing until start().
  Agent(Config config, std::vector<Fd> tcp_listeners, Fd local_listener);
  ~Agent();  // cancels, joins
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  const Config& config() const { return config_; }
  void attach(Connection uplink);
  // Waits for this rank's children; returns why they cannot all come ("" otherwise).
  std::string wait_children(double deadline_s) { return control_.wait_setup(deadline_s); }
  void start() { control_.post({Request::start, {}, {}}); }
  void cancel();
  void finish();  // returns when the thread is done
  void fail(const std::string& what) { control_.post({Request::fail, what, {}}); }
  bool running() const { return thread_.joinable(); }

 private:
  Config config_;
  Control control_;
  std::thread thread_;
};

}  // namespace fb::watch
