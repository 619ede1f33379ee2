// The watchdog's side channel: plain TCP sockets, set up once at the start
// of the run (while MPI still works, to exchange rank 0's address) and then
// used without MPI. Star: every rank holds one connection to rank 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/watch_wire.hpp"

namespace fb::watch {

// Where rank 0 listens, as broadcast to the other ranks.
struct Endpoint {
  std::uint64_t token = 0;  // a random secret: connections that do not present it are refused
  int port = 0;
  std::string host;                    // rank 0's host name
  std::vector<std::string> addresses;  // IPv4 addresses to try, in order
};
std::string to_text(const Endpoint& e);
std::optional<Endpoint> endpoint_from_text(const std::string& text);

// Rank 0's listening socket on every interface, on a port the kernel picks.
// Throws std::runtime_error naming the failing call.
struct Listener {
  int fd = -1;
  int port = 0;
};
Listener listen_any();
// IPv4 addresses of this host's interfaces that are up, loopback last;
// FABRICBENCH_WATCHDOG_ADDR (comma-separated) replaces them.
std::vector<std::string> advertised_addresses();
std::uint64_t random_token();

// One framed, non-blocking connection.
class Connection {
 public:
  Connection() = default;
  explicit Connection(int fd) : fd_(fd) {}
  ~Connection();
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  // Best effort and never blocking: false when the peer is gone.
  bool send(const Message& message);
  // Reads what has arrived; false on end of stream or a socket or protocol error.
  bool receive();
  std::optional<Message> next() { return decoder_.next(); }
  const std::string& error() const { return error_; }
  void close();

 private:
  int fd_ = -1;
  Decoder decoder_;
  std::string error_;
};

// Connects to rank 0 and completes the handshake; tries 127.0.0.1 first when
// on rank 0's host (unless FABRICBENCH_WATCHDOG_ADDR chose the addresses).
// Returns an error text naming every address tried.
std::string connect_to_root(const Endpoint& root, int rank, bool same_host, Connection& out);

}  // namespace fb::watch
