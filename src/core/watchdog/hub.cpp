#include "hub.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

#include "watchdog_impl.hpp"

namespace fb::watch {
namespace {

// Why a child's connection ended: closed, garbage on the wire, or a socket error.
std::string why_lost(const Connection& conn) {
  if (conn.error() == "connection closed") return "its connection closed";
  return conn.broken() ? conn.error() : "its connection broke (" + conn.error() + ")";
}

// A connection must say hello within this; only this run's ranks connect,
// once each, at the start.
constexpr double kHelloTimeoutS = 30;
// After running out of descriptors, leave the listeners alone this long
// (the queue of waiting connections would otherwise wake the loop at once).
constexpr double kListenBackoffS = 0.5;
// Unauthenticated connections held at once beyond the expected children.
constexpr std::size_t kExtraPending = 64;

// The descriptor held back for EMFILE (Hub::reserve_); -1 when none is free.
int open_reserve() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

}  // namespace

Hub::Hub(const Tree& tree, int me, std::uint64_t token, std::vector<Fd> listeners)
    : tree_(tree), me_(me), token_(token), listeners_(std::move(listeners)), reserve_(open_reserve()) {
  for (int r : tree.children(me)) {
    children_.emplace_back();
    children_.back().rank = r;
  }
}

Hub::Child* Hub::child(int rank) {
  auto it = std::lower_bound(children_.begin(), children_.end(), rank,
                             [](const Child& c, int r) { return c.rank < r; });
  return it != children_.end() && it->rank == rank ? &*it : nullptr;
}

int Hub::missing() const {
  return static_cast<int>(std::count_if(children_.begin(), children_.end(), [](const Child& c) { return !c.joined; }));
}

bool Hub::all_done() const {
  return std::all_of(children_.begin(), children_.end(), [](const Child& c) { return c.done || !c.conn.open(); });
}

std::size_t Hub::connections() const {
  return pending_.size() +
         static_cast<std::size_t>(std::count_if(children_.begin(), children_.end(), [](const Child& c) { return c.conn.open(); }));
}

void Hub::add_fds(std::vector<pollfd>& fds) {
  first_fd_ = fds.size();
  slots_.clear();
  for (std::size_t i = 0; i < listeners_.size(); ++i) {
    // While out of descriptors, a listener is left alone for a moment (its
    // waiting connections would make every poll return at once).
    fds.push_back({listen_again_s_ > 0 ? -1 : listeners_[i].get(), POLLIN, 0});
    slots_.emplace_back(Slot::listener, i);
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    fds.push_back({pending_[i].conn.fd(), POLLIN, 0});
    slots_.emplace_back(Slot::pending, i);
  }
  for (std::size_t i = 0; i < children_.size(); ++i) {
    const Connection& c = children_[i].conn;
    if (!c.open()) continue;
    fds.push_back({c.fd(), static_cast<short>(POLLIN | (c.wants_write() ? POLLOUT : 0)), 0});
    slots_.emplace_back(Slot::child, i);
  }
}

void Hub::handle(const std::vector<pollfd>& fds, double now, Events& events) {
  if (listen_again_s_ > 0 && now >= listen_again_s_) listen_again_s_ = 0;
  std::vector<std::size_t> readable_pending;
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    const short revents = fds[first_fd_ + k].revents;
    const auto [slot, i] = slots_[k];
    if (slot == Slot::pending) {
      if (revents) readable_pending.push_back(i);
      continue;
    }
    if (!revents) continue;
    if (slot == Slot::listener) {
      accept_new(listeners_[i].get(), now);
    } else {
      Child& c = children_[i];
      if (revents & POLLOUT) c.conn.flush();
      if (revents & (POLLIN | POLLHUP | POLLERR)) read_child(c, now, events);
    }
  }
  // Pending connections: read the readable ones, drop the dead and the late.
  std::vector<bool> keep(pending_.size(), true);
  for (std::size_t i : readable_pending) read_pending(i, now, events);
  std::size_t out = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (!pending_[i].conn.open()) continue;
    if (now - pending_[i].since_s > kHelloTimeoutS) {
      ++dropped_;
      spdlog::debug("watchdog: dropped a connection that did not say hello within {:g} s", kHelloTimeoutS);
      continue;
    }
    if (out != i) pending_[out] = std::move(pending_[i]);
    ++out;
  }
  pending_.resize(out);
}

void Hub::refuse(int fd, const std::string& why) {
  Message stop;
  stop.type = MsgType::stop;
  stop.text = why;
  const std::string frame = encode(stop);
  [[maybe_unused]] const ssize_t n = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
  ++dropped_;
}

// EMFILE/ENFILE: the connection waits in the kernel's queue and the
// listener stays readable, so a loop that only retries spins. Give back
// the reserve descriptor, take the connection, tell it why it cannot stay,
// and take the reserve again. Another thread of the process (MPI's own) may
// take the descriptor given back before the reserve is retaken: then, with
// no descriptor to say why, the listeners close, so that the kernel refuses
// every rank still connecting at once. Left listening, those ranks waited
// out their handshake timeout (15 s) before the run was refused. Out of
// descriptors the set-up has failed anyway (fd_error_), and no child joins.
bool Hub::out_of_descriptors(int listener, double now) {
  const FdLimit limit = fd_limit();
  if (fd_error_.empty()) {
    fd_error_ = fmt::format(
        "rank {}'s watchdog on {} ran out of file descriptors: it holds one connection per {} ({} of them), and its "
        "open-file limit is {} (hard limit {}); raise `ulimit -n` on that host",
        me_, tree_.host_of(me_), me_ == 0 ? "node leader and per other rank of its node" : "other rank of its node",
        children_.size(), limit.soft, limit.hard);
    spdlog::debug("watchdog: {}", fd_error_);  // the set-up reports it as the run's error
  }
  if (!reserve_.valid()) reserve_.reset(open_reserve());  // freed again since?
  if (reserve_.valid()) {
    reserve_.reset();
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) refuse(fd, fd_error_);
    reserve_.reset(open_reserve());
    if (fd >= 0 && reserve_.valid()) return true;  // one fewer waiting: on to the next
  }
  if (!reserve_.valid()) {
    spdlog::debug("watchdog: no descriptor left to refuse connections with: rank {} stops listening", me_);
    for (Fd& l : listeners_) l.reset();  // their slots stay, at -1, which poll() passes over
    return false;
  }
  listen_again_s_ = now + kListenBackoffS;
  return false;
}

void Hub::accept_new(int listener, double now) {
  while (true) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && out_of_descriptors(listener, now)) continue;
      return;
    }
    if (pending_.size() >= children_.size() + kExtraPending) {
      refuse(fd, "too many connections waiting for their handshake");
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // fails harmlessly on a Unix socket
    pending_.push_back({Connection(fd), now});
  }
}

// A new connection must say hello with this run's token, for a child of
// this rank that has not joined yet; anything else is dropped at once.
void Hub::read_pending(std::size_t i, double now, Events& events) {
  Pending& p = pending_[i];
  const bool alive = p.conn.receive();
  const auto m = p.conn.next();
  if (!m) {
    if (!alive || p.conn.broken()) {  // closed, or garbage: at once, not at the hello timeout
      ++dropped_;
      spdlog::debug("watchdog: dropped a connection before its hello: {}", p.conn.error());
      p.conn.close();
    }
    return;
  }
  Child* c = m->type == MsgType::hello && m->token == token_ ? child(m->rank) : nullptr;
  if (!c || c->joined) {
    ++dropped_;
    spdlog::debug("watchdog: dropped a connection whose first message was not a hello of a child of rank {}", me_);
    p.conn.close();
    return;
  }
  Message welcome;
  welcome.type = MsgType::welcome;
  welcome.token = token_;
  p.conn.send(welcome);
  c->conn = std::move(p.conn);
  c->joined = true;
  events.joined(c->rank);
  // What came with the hello, and how it ended: a malformed frame or a
  // hang-up in the same read drops the child now, since no later read may
  // ever come to show it.
  while (auto more = c->conn.next()) {
    std::string why;
    if (!accepts(*c, *more, why)) return drop(*c, why, now, events);
    events.message(c->rank, *more, now);
  }
  if (!alive || c->conn.broken()) drop(*c, why_lost(c->conn), now, events);
}

bool Hub::accepts(const Child& c, const Message& m, std::string& why) const {
  if (!travels_up(m.type) || m.type == MsgType::hello) {
    why = fmt::format("sent a message its parent does not take (type {})", static_cast<int>(m.type));
    return false;
  }
  if (!tree_.speaks_for(c.rank, m.rank)) {
    why = fmt::format("sent a message about rank {}, which it does not speak for", m.rank);
    return false;
  }
  return true;
}

void Hub::drop(Child& c, const std::string& why, double now, Events& events) {
  c.conn.close();
  if (c.done) return;
  ++dropped_;
  spdlog::debug("watchdog: dropped rank {}: {}", c.rank, why);
  c.done = true;
  events.gone(c.rank, why, now);
}

void Hub::read_child(Child& c, double now, Events& events) {
  const bool alive = c.conn.receive();
  while (auto m = c.conn.next()) {
    std::string why;
    if (!accepts(c, *m, why)) return drop(c, why, now, events);
    // A child speaking of itself: bye, signal and leaving mean it is going.
    if (m->rank == c.rank && (m->type == MsgType::bye || m->type == MsgType::signal || m->type == MsgType::leaving)) {
      events.message(c.rank, *m, now);
      c.done = true;
      continue;
    }
    events.message(c.rank, *m, now);
  }
  if (alive && !c.conn.broken()) return;
  drop(c, why_lost(c.conn), now, events);
}

void Hub::send_all(const Message& m) {
  for (auto& c : children_)
    if (c.conn.open() && !c.done) c.conn.send(m);
}

void Hub::stop_all(const std::string& why, double drain_s, int signal) {
  Message stop;
  stop.type = MsgType::stop;
  stop.text = why;
  stop.signal = signal;
  std::vector<pollfd> fds;
  for (auto& c : children_) {
    if (!c.conn.open()) continue;
    if (c.conn.send(stop)) {
      c.conn.finish_sending();
      fds.push_back({c.conn.fd(), POLLIN, 0});
    }
  }
  const double deadline = monotonic_s() + drain_s;
  std::size_t open = fds.size();
  while (open > 0 && monotonic_s() < deadline && ::poll(fds.data(), fds.size(), 100) >= 0) {
    for (auto& f : fds) {
      if (f.fd < 0 || !f.revents) continue;
      char buf[4096];
      const ssize_t n = ::recv(f.fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        f.fd = -1;  // this child is gone
        --open;
      }
    }
  }
}

}  // namespace fb::watch
