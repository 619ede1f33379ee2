// Rank 0's watchdog loop: accept the other ranks, keep the latest state of
// each, and end the run when it is hung, a rank is lost, a rank failed or a
// signal arrived.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include <optional>

#include "watchdog_impl.hpp"

namespace fb {
namespace {

constexpr int kTickMs = 100;
// After the first lost rank, wait this long for others lost with it (a node
// going down takes all its ranks), then report them together.
constexpr double kLostGraceS = 0.2;
constexpr double kHandshakeTimeoutS = 30;
// How long rank 0 waits for the other ranks to leave after telling them to.
constexpr double kStopDrainS = 2;

struct Pending {
  watch::Connection conn;
  double since_s = 0;
};

class Monitor {
 public:
  explicit Monitor(Watchdog::Impl& w) : w_(w), signal_fd_(install_signal_pipe()) {
    views_.resize(static_cast<std::size_t>(w.size));
    heard_s_.assign(views_.size(), 0);
    connected_.assign(views_.size(), false);
    w_.peers.resize(views_.size());
    for (std::size_t r = 0; r < views_.size(); ++r) {
      views_[r].rank = static_cast<int>(r);
      views_[r].host = w.hosts.at(r);
    }
  }
  ~Monitor() { uninstall_signal_pipe(); }

  void loop() {
    while (true) {
      wait_and_read(monotonic_s());
      sample_self();
      check_silence(monotonic_s());
      if (finishing_ && all_done()) break;
      if (auto end = judge(monotonic_s())) finish_run(*end);
    }
    for (auto& p : w_.peers) p.close();
  }

 private:
  void wait_and_read(double now) {
    std::vector<pollfd> fds{{w_.wake_read, POLLIN, 0}, {signal_fd_, POLLIN, 0}, {w_.listener.fd, POLLIN, 0}};
    for (auto& p : pending_) fds.push_back({p.conn.fd(), POLLIN, 0});
    for (auto& p : w_.peers)
      if (p.open()) fds.push_back({p.fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), kTickMs) <= 0) return;
    if (fds[0].revents) on_request(w_.take());
    if (fds[1].revents) on_signal();
    if (fds[2].revents) accept_new(now);
    read_pending(now);
    for (std::size_t r = 1; r < w_.peers.size(); ++r) read_peer(r, now);
  }

  // Rank 0's own state, fresh before every judgement.
  void sample_self() {
    views_[0].state = w_.clock.sample(*w_.board, w_.policy, monotonic_s());
    views_[0].reported = true;
  }

  void on_request(const Request& r) {
    if (r.kind == Request::finish) {
      finishing_ = true;
      views_[0].finished = true;
    } else if (r.kind == Request::fail) {
      sample_self();
      failure_ = watch::error_end(0, r.what, views_);
    }
  }

  void on_signal() {
    unsigned char sig = 0;
    if (::read(signal_fd_, &sig, 1) == 1 && signal_ == 0) {
      signal_ = sig;
      signal_rank_ = 0;
    }
  }

  void accept_new(double now) {
    while (true) {
      const int fd = ::accept4(w_.listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      pending_.push_back({watch::Connection(fd), now});
    }
  }

  // A new connection must say hello with this run's token and a rank not yet connected.
  void read_pending(double now) {
    for (std::size_t i = 0; i < pending_.size();) {
      Pending& p = pending_[i];
      const bool alive = p.conn.receive();
      const auto m = p.conn.next();
      if (m && m->type == watch::MsgType::hello && m->token == w_.token && m->rank > 0 && m->rank < w_.size &&
          !connected_[static_cast<std::size_t>(m->rank)]) {
        const auto r = static_cast<std::size_t>(m->rank);
        watch::Message welcome;
        welcome.type = watch::MsgType::welcome;
        welcome.token = w_.token;
        p.conn.send(welcome);
        w_.peers[r] = std::move(p.conn);
        connected_[r] = true;
        heard_s_[r] = now;
      } else if (!m && alive && now - p.since_s < kHandshakeTimeoutS) {
        ++i;
        continue;
      }
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  void read_peer(std::size_t r, double now) {
    watch::Connection& c = w_.peers[r];
    if (!c.open()) return;
    const bool alive = c.receive();
    while (auto m = c.next()) on_message(r, *m, now);
    if (!alive && !views_[r].finished) mark_lost(r, c.error() == "connection closed" ? "its connection closed" : c.error(), now);
    if (!alive) c.close();
  }

  void on_message(std::size_t r, const watch::Message& m, double now) {
    heard_s_[r] = now;
    watch::RankView& v = views_[r];
    switch (m.type) {
      case watch::MsgType::state:
        v.state = m.state;
        v.reported = true;
        break;
      case watch::MsgType::bye:
        v.finished = true;
        break;
      case watch::MsgType::fail:
        if (!failure_) failure_ = watch::error_end(static_cast<int>(r), m.text, views_);
        break;
      case watch::MsgType::signal:
        v.finished = true;  // going, and said why: not lost
        if (signal_ == 0) {
          signal_ = m.signal;
          signal_rank_ = static_cast<int>(r);
        }
        break;
      default:
        mark_lost(r, fmt::format("sent an unexpected message (type {})", static_cast<int>(m.type)), now);
    }
  }

  void mark_lost(std::size_t r, std::string why, double now) {
    watch::RankView& v = views_[r];
    if (v.lost || v.finished) return;
    v.lost = true;
    v.lost_why = std::move(why);
    w_.peers[r].close();
    if (first_lost_s_ < 0) first_lost_s_ = now;
  }

  // A rank that neither progresses nor speaks: its host may be gone (no FIN).
  void check_silence(double now) {
    for (std::size_t r = 1; r < views_.size(); ++r) {
      const double silent = now - heard_s_[r];
      if (connected_[r] && !views_[r].finished && !views_[r].lost && silent > w_.policy.silence_s())
        mark_lost(r, fmt::format("silent for {:.1f} s (its host or process stopped answering)", silent), now);
    }
  }

  bool all_done() const {
    for (std::size_t r = 1; r < views_.size(); ++r)
      if (connected_[r] && !views_[r].finished && !views_[r].lost) return false;
    return true;
  }

  std::optional<watch::RunEnd> judge(double now) {
    for (std::size_t r = 1; r < views_.size(); ++r) views_[r].age_s = now - heard_s_[r];
    if (failure_) return failure_;
    // A signal ends the job now: the launcher's SIGKILL may follow within a
    // second. If a rank was lost before, that is the cause (mpirun sends
    // SIGTERM to the others when a rank dies) and the record says so.
    if (signal_ != 0 && first_lost_s_ >= 0) {
      auto end = watch::lost_end(views_);
      end.exit_code = 128 + signal_;
      return end;
    }
    if (signal_ != 0) return watch::killed_end(signal_, signal_rank_, views_);
    // Once the sweep is over, a rank that dies on its way out costs no results.
    if (first_lost_s_ >= 0 && !finishing_ && now - first_lost_s_ >= kLostGraceS) return watch::lost_end(views_);
    if (w_.policy.enabled() && watch::hang_detected(views_)) return watch::hang_end(views_, w_.policy);
    return std::nullopt;
  }

  [[noreturn]] void finish_run(const watch::RunEnd& end) {
    if (w_.on_end) w_.on_end(end);
    stop_peers(end.status);
    if (signal_ != 0) {
      w_.board->abort_active_group();
      die_of(signal_);
    }
    leave_job(w_.board, end.exit_code);
  }

  // Every rank leaves on "stop". Half-close and wait (briefly) for them to go,
  // reading what they still send: closing with unread data would reset the
  // connection and could drop the "stop" before they read it.
  void stop_peers(const std::string& why) {
    watch::Message stop;
    stop.type = watch::MsgType::stop;
    stop.text = why;
    std::vector<pollfd> fds;
    for (auto& p : w_.peers)
      if (p.open() && p.send(stop)) {
        ::shutdown(p.fd(), SHUT_WR);
        fds.push_back({p.fd(), POLLIN, 0});
      }
    const double deadline = monotonic_s() + kStopDrainS;
    std::size_t open = fds.size();
    while (open > 0 && monotonic_s() < deadline && ::poll(fds.data(), fds.size(), kTickMs) >= 0) {
      for (auto& f : fds) {
        if (f.fd < 0 || !f.revents) continue;
        char buf[4096];
        const ssize_t n = ::recv(f.fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          f.fd = -1;  // this rank is gone
          --open;
        }
      }
    }
  }

  Watchdog::Impl& w_;
  int signal_fd_;
  std::vector<watch::RankView> views_;
  std::vector<double> heard_s_;
  std::vector<bool> connected_;
  std::vector<Pending> pending_;
  std::optional<watch::RunEnd> failure_;
  double first_lost_s_ = -1;
  int signal_ = 0;
  int signal_rank_ = 0;  // the first rank that reported it
  bool finishing_ = false;
};

}  // namespace

void Watchdog::Impl::run_monitor() { Monitor(*this).loop(); }

}  // namespace fb
