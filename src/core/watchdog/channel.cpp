#include "channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "fabricbench/core/clock.hpp"

namespace fb::watch {
namespace {

constexpr double kConnectTimeoutS = 3;
constexpr double kHandshakeTimeoutS = 15;  // rank 0 may be accepting thousands of ranks
// A peer that stopped reading: keep this much for it, then drop messages.
constexpr std::size_t kMaxQueuedBytes = 256 * 1024;
constexpr int kBindTries = 8;

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

sockaddr_un abstract_address(const std::string& name, socklen_t& len) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  // Abstract namespace: a leading NUL, no file, gone with the socket; scoped
  // by network namespace, as the node's ranks are.
  const std::size_t n = std::min(name.size(), sizeof(sa.sun_path) - 1);
  std::memcpy(sa.sun_path + 1, name.data(), n);
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return sa;
}

// Waits for a non-blocking connect to finish. Returns "" or why not.
[[nodiscard]] std::string finish_connect(int fd) {
  if (!wait_fd(fd, POLLOUT, now_us() + kConnectTimeoutS * 1e6)) return fmt::format("no answer within {:g} s", kConnectTimeoutS);
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err != 0 ? std::string(std::strerror(err)) : std::string();
}

// A non-blocking connect bounded in time. Returns the fd or -1 with `why`.
int connect_tcp(const std::string& address, int port, std::string& why) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
    why = "not an IPv4 address";
    return -1;
  }
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    why = errno_text("socket");
    return -1;
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 && errno != EINPROGRESS) {
    why = errno_text("connect");
    return -1;
  }
  why = finish_connect(fd.get());
  if (!why.empty()) return -1;
  set_nodelay(fd.get());
  return fd.release();
}

// hello -> welcome with the same token: we reached this run's parent. A
// parent that cannot take us answers stop with the reason instead.
std::string handshake(Connection& c, std::uint64_t token, int rank) {
  Message hello;
  hello.type = MsgType::hello;
  hello.token = token;
  hello.rank = rank;
  if (!c.send(hello)) return "sending hello failed";
  const double deadline = now_us() + kHandshakeTimeoutS * 1e6;
  while (wait_fd(c.fd(), POLLIN, deadline)) {
    const bool alive = c.receive();
    if (auto m = c.next()) {
      if (m->type == MsgType::welcome && m->token == token) return {};
      if (m->type == MsgType::stop) return "refused: " + m->text;
      return "answered, but not as this run's watchdog";
    }
    if (!alive) return c.error().empty() ? "closed by the peer" : c.error();
  }
  return fmt::format("no welcome within {:g} s", kHandshakeTimeoutS);
}

// Binds every address on one port; throws for a chosen address that fails.
std::vector<Fd> bind_all(const std::vector<std::string>& addresses, bool chosen, int& port, bool& port_taken,
                         std::vector<std::string>& bound) {
  std::vector<Fd> out;
  bound.clear();
  port_taken = false;
  for (const auto& a : addresses) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(out.empty() ? 0 : port));
    if (::inet_pton(AF_INET, a.c_str(), &sa.sin_addr) != 1)
      throw std::runtime_error(fmt::format("watchdog: FABRICBENCH_WATCHDOG_ADDR lists '{}', which is not an IPv4 address", a));
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) throw std::runtime_error("watchdog: " + errno_text("socket"));
    socklen_t len = sizeof(sa);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
      if (errno == EADDRINUSE && !out.empty()) {
        port_taken = true;  // another program holds this port on that address: try another port
        return {};
      }
      if (!chosen) continue;  // an interface that went down since we listed it
      throw std::runtime_error(fmt::format(
          "watchdog: cannot listen on {} (from FABRICBENCH_WATCHDOG_ADDR): {}; list addresses of rank 0's host", a,
          std::strerror(errno)));
    }
    if (::listen(fd.get(), SOMAXCONN) != 0 || ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0)
      throw std::runtime_error(fmt::format("watchdog: {} on {}", errno_text("listen"), a));
    if (out.empty()) port = ntohs(sa.sin_port);
    out.push_back(std::move(fd));
    bound.push_back(a);
  }
  return out;
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

int Fd::release() { return std::exchange(fd_, -1); }

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string to_text(const Endpoint& e) {
  std::string addrs;
  for (const auto& a : e.addresses) addrs += (addrs.empty() ? "" : ",") + a;
  return fmt::format("{} {} {} {}", e.token, e.port, e.host, addrs.empty() ? "-" : addrs);
}

std::optional<Endpoint> endpoint_from_text(const std::string& text) {
  std::istringstream in(text);
  Endpoint e;
  std::string addrs;
  if (!(in >> e.token >> e.port >> e.host >> addrs)) return std::nullopt;
  if (addrs == "-") return e;
  std::string a;
  std::istringstream list(addrs);
  while (std::getline(list, a, ',')) e.addresses.push_back(a);
  return e;
}

FdLimit fd_limit() {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) != 0) return {};
  return {static_cast<std::uint64_t>(l.rlim_cur), static_cast<std::uint64_t>(l.rlim_max)};
}

FdLimit raise_fd_limit() {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) == 0 && l.rlim_cur < l.rlim_max) {
    l.rlim_cur = l.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &l);
  }
  return fd_limit();
}

std::vector<std::string> advertised_addresses(bool* chosen) {
  std::vector<std::string> out;
  if (const char* forced = std::getenv("FABRICBENCH_WATCHDOG_ADDR"); forced && *forced) {
    std::istringstream list(forced);
    for (std::string a; std::getline(list, a, ',');)
      if (!a.empty() && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    if (chosen) *chosen = true;
    return out;
  }
  if (chosen) *chosen = false;
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) == 0) {
    for (ifaddrs* i = all; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
          (i->ifa_flags & IFF_LOOPBACK))
        continue;
      char buf[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
      if (std::find(out.begin(), out.end(), buf) == out.end()) out.emplace_back(buf);
    }
    ::freeifaddrs(all);
  }
  out.emplace_back("127.0.0.1");
  return out;
}

std::vector<Fd> listen_tcp(const std::vector<std::string>& addresses, bool chosen, int& port,
                           std::vector<std::string>& bound) {
  for (int attempt = 0; attempt < kBindTries; ++attempt) {
    bool port_taken = false;
    auto fds = bind_all(addresses, chosen, port, port_taken, bound);
    if (!fds.empty()) return fds;
    if (!port_taken) break;
  }
  throw std::runtime_error("watchdog: cannot listen on any of this host's addresses (" +
                           fmt::format("{}", fmt::join(addresses, ", ")) + ")");
}

std::string local_name(std::uint64_t token, int node) { return fmt::format("fabricbench-watchdog-{:016x}-{}", token, node); }

Fd listen_local(const std::string& name) {
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) throw std::runtime_error("watchdog: " + errno_text("socket(AF_UNIX)"));
  socklen_t len = 0;
  const sockaddr_un sa = abstract_address(name, len);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), len) != 0 || ::listen(fd.get(), SOMAXCONN) != 0)
    throw std::runtime_error(fmt::format("watchdog: cannot listen on the local socket @{}: {}", name, std::strerror(errno)));
  return fd;
}

std::uint64_t random_token() {
  std::random_device rd;  // getrandom(2) on Linux
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

bool Connection::send(const Message& message) {
  if (!open()) return false;
  if (out_.size() - out_at_ > kMaxQueuedBytes) {
    ++dropped_;
    return flush();
  }
  out_ += encode(message);
  return flush();
}

bool Connection::flush() {
  if (!open()) return false;
  while (out_at_ < out_.size()) {
    const ssize_t n = ::send(fd(), out_.data() + out_at_, out_.size() - out_at_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_at_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    error_ = errno_text("send");
    return false;
  }
  if (out_at_ == out_.size()) {
    out_.clear();
    out_at_ = 0;
  } else if (out_at_ > kMaxQueuedBytes) {
    out_.erase(0, out_at_);
    out_at_ = 0;
  }
  return true;
}

void Connection::finish_sending() {
  if (!open()) return;
  flush();
  ::shutdown(fd(), SHUT_WR);
}

std::optional<Message> Connection::next() {
  auto m = decoder_.next();
  if (!m && broken() && error_.empty()) error_ = "protocol error: " + decoder_.error();
  return m;
}

bool Connection::receive() {
  if (!open()) return false;
  char buf[16384];
  while (true) {
    const ssize_t n = ::recv(fd(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      decoder_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      if (broken()) return false;
      if (static_cast<std::size_t>(n) < sizeof(buf)) return true;
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

std::string connect_tcp_parent(const Endpoint& root, int rank, bool same_host, Connection& out) {
  std::vector<std::string> order;
  const bool loopback = std::find(root.addresses.begin(), root.addresses.end(), "127.0.0.1") != root.addresses.end();
  // On rank 0's host its loopback listener is the sure way, when it has one.
  if (same_host && loopback) order.emplace_back("127.0.0.1");
  for (const auto& a : root.addresses)
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  std::string tried;
  for (const auto& address : order) {
    std::string why;
    const int fd = connect_tcp(address, root.port, why);
    if (fd >= 0) {
      Connection c(fd);
      why = handshake(c, root.token, rank);
      if (why.empty()) {
        out = std::move(c);
        return {};
      }
      if (why.rfind("refused: ", 0) == 0) return why.substr(9);  // rank 0 said why: that is the message
    }
    tried += fmt::format("{}{}:{} ({})", tried.empty() ? "" : ", ", address, root.port, why);
  }
  if (order.empty()) tried = "no address (rank 0 listed none)";
  return fmt::format("cannot reach rank 0's watchdog on {}: tried {}; set FABRICBENCH_WATCHDOG_ADDR to an address of "
                     "rank 0's host that every node can reach",
                     root.host, tried);
}

std::string connect_local_parent(const std::string& name, std::uint64_t token, int rank, int leader,
                                 Connection& out) {
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  std::string why;
  if (!fd.valid()) {
    why = errno_text("socket(AF_UNIX)");
  } else {
    socklen_t len = 0;
    const sockaddr_un sa = abstract_address(name, len);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), len) != 0 && errno != EINPROGRESS)
      why = errno_text("connect");
    else
      why = finish_connect(fd.get());
  }
  if (why.empty()) {
    Connection c(fd.release());
    why = handshake(c, token, rank);
    if (why.empty()) {
      out = std::move(c);
      return {};
    }
    if (why.rfind("refused: ", 0) == 0) return why.substr(9);
  }
  return fmt::format("cannot reach the watchdog of node leader rank {} on its local socket @{} ({}); ranks that share "
                     "a host name must share its network namespace",
                     leader, name, why);
}

}  // namespace fb::watch
