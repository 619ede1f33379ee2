// The watchdog's sockets: set up once at the start of the run (while MPI
// still works, to exchange rank 0's address) and then used without MPI.
// Rank 0 listens on TCP for the node leaders, on the advertised addresses
// only; every leader (rank 0 too) listens on a Unix socket in the abstract
// namespace for its own node's ranks (see tree.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/watch_wire.hpp"

namespace fb::watch {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Where rank 0 listens, as broadcast to the other ranks.
struct Endpoint {
  std::uint64_t token = 0;  // a random secret: connections that do not present it are refused
  int port = 0;
  std::string host;                    // rank 0's host name
  std::vector<std::string> addresses;  // IPv4 addresses to try, in order
};
std::string to_text(const Endpoint& e);
std::optional<Endpoint> endpoint_from_text(const std::string& text);

// The open-file limit (RLIMIT_NOFILE): a rank holds one descriptor per child.
struct FdLimit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};
// Raises the soft limit to the hard one (allowed without privileges) and
// returns the limit now in force.
FdLimit raise_fd_limit();
FdLimit fd_limit();

// IPv4 addresses of this host's interfaces that are up, loopback last; or
// those FABRICBENCH_WATCHDOG_ADDR lists (comma-separated), then `chosen` is true.
std::vector<std::string> advertised_addresses(bool* chosen = nullptr);
// One listening TCP socket per address, all on the same port (the kernel
// picks it). An address that cannot be bound is an error when the user
// chose it and skipped otherwise (an interface going down). Throws
// std::runtime_error naming the address and the fix.
// `bound`: the addresses it listens on, in order.
std::vector<Fd> listen_tcp(const std::vector<std::string>& addresses, bool chosen, int& port,
                           std::vector<std::string>& bound);
// The abstract Unix socket name of `node`'s leader in the run with `token`.
std::string local_name(std::uint64_t token, int node);
Fd listen_local(const std::string& name);
std::uint64_t random_token();

// One framed, non-blocking connection. What cannot be sent at once waits in
// a bounded queue (sent when the socket takes it: poll for POLLOUT while
// wants_write()); a frame is never cut.
class Connection {
 public:
  Connection() = default;
  explicit Connection(int fd) : fd_(fd) {}
  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.valid(); }
  // Queues and sends what the socket takes; false when the peer is gone.
  // A peer that has stopped reading for long loses messages (counted), not frames.
  bool send(const Message& message);
  bool flush();
  bool wants_write() const { return out_.size() > out_at_; }
  // Reads what has arrived; false on end of stream or a socket or protocol error.
  bool receive();
  // The next whole message; nullopt when more bytes are needed, or for good
  // once a malformed frame came (then broken() and error() say so).
  std::optional<Message> next();
  bool broken() const { return !decoder_.error().empty(); }
  const std::string& error() const { return error_; }
  std::uint64_t dropped() const { return dropped_; }
  void close() { fd_.reset(); }
  // Half-close after flushing: the peer reads everything, then end of stream.
  void finish_sending();

 private:
  Fd fd_;
  Decoder decoder_;
  std::string error_;
  std::string out_;
  std::size_t out_at_ = 0;
  std::uint64_t dropped_ = 0;
};

// Connects to rank 0 over TCP (a node leader) and completes the handshake;
// on rank 0's host tries 127.0.0.1 first when rank 0 listens there.
// Returns an error text naming every address tried, "" when connected.
[[nodiscard]] std::string connect_tcp_parent(const Endpoint& root, int rank, bool same_host, Connection& out);
// Connects to this node's leader `leader` on its local socket.
std::string connect_local_parent(const std::string& name, std::uint64_t token, int rank, int leader,
                                 Connection& out);

}  // namespace fb::watch
