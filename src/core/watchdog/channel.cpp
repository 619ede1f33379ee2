#include "channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

#include "fabricbench/core/clock.hpp"

namespace fb::watch {
namespace {

constexpr double kConnectTimeoutS = 3;
constexpr double kHandshakeTimeoutS = 15;  // rank 0 may be accepting thousands of ranks

std::string errno_text(const char* call) { return fmt::format("{}: {}", call, std::strerror(errno)); }


void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool wait_fd(int fd, short events, double deadline_us) {
  while (true) {
    const double left_ms = (deadline_us - now_us()) / 1e3;
    if (left_ms <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left_ms) + 1);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// A non-blocking connect bounded in time. Returns the fd or -1 with `why`.
int connect_bounded(const std::string& address, int port, std::string& why) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
    why = "not an IPv4 address";
    return -1;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    why = errno_text("socket");
    return -1;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 && errno != EINPROGRESS) {
    why = errno_text("connect");
    ::close(fd);
    return -1;
  }
  if (!wait_fd(fd, POLLOUT, now_us() + kConnectTimeoutS * 1e6)) {
    why = fmt::format("no answer within {:g} s", kConnectTimeoutS);
    ::close(fd);
    return -1;
  }
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    why = std::strerror(err);
    ::close(fd);
    return -1;
  }
  set_nodelay(fd);
  return fd;
}

// hello -> welcome with the same token: we reached this run's rank 0.
std::string handshake(Connection& c, std::uint64_t token, int rank) {
  Message hello;
  hello.type = MsgType::hello;
  hello.token = token;
  hello.rank = rank;
  if (!c.send(hello)) return "sending hello failed";
  const double deadline = now_us() + kHandshakeTimeoutS * 1e6;
  while (wait_fd(c.fd(), POLLIN, deadline)) {
    if (!c.receive()) return c.error().empty() ? "closed by the peer" : c.error();
    if (auto m = c.next()) {
      if (m->type == MsgType::welcome && m->token == token) return {};
      return "answered, but not as this run's rank 0";
    }
  }
  return fmt::format("no welcome within {:g} s", kHandshakeTimeoutS);
}

}  // namespace

std::string to_text(const Endpoint& e) {
  std::string addrs;
  for (const auto& a : e.addresses) addrs += (addrs.empty() ? "" : ",") + a;
  return fmt::format("{} {} {} {}", e.token, e.port, e.host, addrs);
}

std::optional<Endpoint> endpoint_from_text(const std::string& text) {
  std::istringstream in(text);
  Endpoint e;
  std::string addrs;
  if (!(in >> e.token >> e.port >> e.host >> addrs)) return std::nullopt;
  std::string a;
  std::istringstream list(addrs);
  while (std::getline(list, a, ',')) e.addresses.push_back(a);
  return e;
}

Listener listen_any() {
  Listener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (l.fd < 0) throw std::runtime_error("watchdog: " + errno_text("socket"));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  sa.sin_port = 0;
  socklen_t len = sizeof(sa);
  if (::bind(l.fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(l.fd, SOMAXCONN) != 0 ||
      ::getsockname(l.fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    const std::string why = errno_text("bind/listen");
    ::close(l.fd);
    throw std::runtime_error("watchdog: " + why);
  }
  l.port = ntohs(sa.sin_port);
  return l;
}

std::vector<std::string> advertised_addresses() {
  std::vector<std::string> out;
  if (const char* forced = std::getenv("FABRICBENCH_WATCHDOG_ADDR"); forced && *forced) {
    std::istringstream list(forced);
    for (std::string a; std::getline(list, a, ',');)
      if (!a.empty()) out.push_back(a);
    return out;
  }
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) == 0) {
    for (ifaddrs* i = all; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
          (i->ifa_flags & IFF_LOOPBACK))
        continue;
      char buf[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
      out.emplace_back(buf);
    }
    ::freeifaddrs(all);
  }
  out.emplace_back("127.0.0.1");
  return out;
}

std::uint64_t random_token() {
  std::random_device rd;  // getrandom(2) on Linux
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

Connection::~Connection() { close(); }

Connection::Connection(Connection&& other) noexcept
    : fd_(other.fd_), decoder_(std::move(other.decoder_)), error_(std::move(other.error_)) {
  other.fd_ = -1;
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    decoder_ = std::move(other.decoder_);
    error_ = std::move(other.error_);
    other.fd_ = -1;
  }
  return *this;
}

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool Connection::send(const Message& message) {
  if (fd_ < 0) return false;
  const std::string frame = encode(message);
  // Frames are tiny against the socket buffer: a partial send means the peer
  // has stopped reading, and then losing a heartbeat is what we want to show.
  const ssize_t n = ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  return n == static_cast<ssize_t>(frame.size());
}

bool Connection::receive() {
  if (fd_ < 0) return false;
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      decoder_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      if (!decoder_.error().empty()) {
        error_ = "protocol error: " + decoder_.error();
        return false;
      }
      continue;
    }
    if (n == 0) {
      error_ = "connection closed";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    error_ = errno_text("recv");
    return false;
  }
}

std::string connect_to_root(const Endpoint& root, int rank, bool same_host, Connection& out) {
  std::vector<std::string> order;
  // Loopback first on rank 0's host, unless the user chose the addresses.
  if (same_host && !std::getenv("FABRICBENCH_WATCHDOG_ADDR")) order.emplace_back("127.0.0.1");
  for (const auto& a : root.addresses)
    if (!(same_host && a == "127.0.0.1")) order.push_back(a);
  std::string tried;
  for (const auto& address : order) {
    std::string why;
    const int fd = connect_bounded(address, root.port, why);
    if (fd >= 0) {
      Connection c(fd);
      why = handshake(c, root.token, rank);
      if (why.empty()) {
        out = std::move(c);
        return {};
      }
    }
    tried += fmt::format("{}{}:{} ({})", tried.empty() ? "" : ", ", address, root.port, why);
  }
  return fmt::format("cannot reach rank 0's watchdog on {}: tried {}", root.host, tried);
}

}  // namespace fb::watch
