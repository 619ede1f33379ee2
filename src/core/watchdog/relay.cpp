// The watchdog loop of every rank but 0. Each reports its own state to its
// parent four times a second; a node leader also hands its node's ranks'
// messages up to rank 0 (states batched once a report period, with how
// long ago it heard each) and rank 0's heartbeats and stop down to them.
// A rank whose parent falls silent (frozen, or its host gone) ends the job
// itself; so does one whose parent hangs up.
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fmt/format.h>

#include <optional>

#include "fabricbench/core/errors.hpp"
#include "hub.hpp"
#include "loop.hpp"
#include "watchdog_impl.hpp"

namespace fb::watch {
namespace {

// How long a leader waits for its node's ranks to hang up after telling
// them to stop (rank 0 waits a little longer for the leaders).
constexpr double kRelayStopDrainS = 1;
// How long a rank that received a signal waits for rank 0's stop before it
// dies of the signal anyway (rank 0 seals the record in tens of milliseconds).
constexpr double kSignalGraceS = 3;

class Relay : public Hub::Events {
 public:
  Relay(const Config& config, Control& control, Fd local_listener)
      : c_(config),
        control_(control),
        tree_(config.rank_node, config.node_hosts),
        cadence_(config.clock, own_gap_s(config.policy), config.rank_stopped) {
    signal_fd_ = config.signal_fd >= 0 ? config.signal_fd : signals_.emplace().fd();
    if (local_listener.valid()) {
      std::vector<Fd> l;
      l.push_back(std::move(local_listener));
      hub_.emplace(tree_, c_.rank, c_.token, std::move(l));
    }
    const int parent = tree_.parent(c_.rank);
    parent_name_ = parent == 0 ? fmt::format("rank 0 ({})", tree_.host_of(0))
                               : fmt::format("node leader rank {} ({})", parent, tree_.host_of(parent));
    for (int r : tree_.ranks_of_node(tree_.node_of(c_.rank))) {
      fresh_.emplace_back();
      fresh_.back().rank = r;
    }
  }

  void loop() {
    double next_report = 0;
    while (!over_) {
      if (hub_ && !live_) control_.report_setup(hub_->missing(), hub_->fd_error());
      std::vector<pollfd> fds{{control_.wake_fd(), POLLIN, 0}, {signal_fd_, POLLIN, 0}};
      const std::size_t up_at = fds.size();
      fds.push_back({up_.open() ? up_.fd() : -1, static_cast<short>(POLLIN | (up_.wants_write() ? POLLOUT : 0)), 0});
      if (hub_) hub_->add_fds(fds);
      cadence_.before_poll();
      const int n = ::poll(fds.data(), fds.size(), kTickMs);
      double away = 0;
      const double now = cadence_.after_poll(away);
      if (away > 0 && live_) restart(now, away);
      if (signal_ != 0 && signal_at_s_ < 0) signal_at_s_ = now;
      if (signal_ != 0 && now - signal_at_s_ > kSignalGraceS) c_.die_of_signal(signal_);
      if (n > 0) {
        if (fds[0].revents) on_requests(now);
        if (over_) break;
        if (fds[1].revents) on_signal();
        if (fds[up_at].revents & POLLOUT) up_.flush();
        if (fds[up_at].revents & (POLLIN | POLLHUP | POLLERR)) read_parent(now);
        if (over_) break;
      }
      if (hub_) hub_->handle(fds, now, *this);  // every wake: the hub's own timers run there too (Hub::handle)
      if (!live_) continue;
      if (finishing_ && signal_ != 0) c_.die_of_signal(signal_);
      if (finishing_ && (!hub_ || hub_->all_done())) return say_bye();
      if (now >= next_report) {
        report(now);
        if (hub_) {
          Message beat;
          beat.type = MsgType::beat;
          hub_->send_all(beat);
        }
        next_report = now + kReportPeriodS;
      }
      if (now - up_heard_s_ > c_.policy.silence_s() + kParentGraceS) parent_silent(now);
    }
  }

 private:
  // ---- from this rank's own engine ----
  void on_requests(double now) {
    for (auto& r : control_.take()) {
      switch (r.kind) {
        case Request::attach:
          up_ = std::move(*r.uplink);
          up_heard_s_ = now;
          break;
        case Request::start:
          live_ = true;
          restart(now, 0);
          break;
        case Request::finish:
          finishing_ = true;
          break;
        case Request::fail:
          report(now);  // where it failed, for rank 0's message
          send_up(MsgType::fail, c_.rank, r.what);
          break;
        case Request::cancel:
          over_ = true;
          return;
      }
    }
  }

  void restart(double now, double away_s) {
    if (away_s > 0) spdlog::debug("watchdog: this rank's watchdog did not run for {:.1f} s: restarting its clocks", away_s);
    clock_.restart(now);
    up_heard_s_ = now;
    for (auto& f : fresh_) f.at_s = std::max(f.at_s, now);
  }

  // Tell rank 0 first, so that the record says the job was stopped by a
  // signal rather than that this rank was lost; then wait for its stop (it
  // has sealed the record) before dying of the signal. A rank that died at
  // once let mpirun, which kills the rest of a job as soon as one rank has
  // died of a signal it sent, SIGKILL rank 0 before it sealed the record.
  void on_signal() {
    unsigned char sig = 0;
    if (::read(signal_fd_, &sig, 1) != 1 || signal_ != 0) return;
    Message m;
    m.type = MsgType::signal;
    m.rank = c_.rank;
    m.signal = sig;
    up_.send(m);
    up_.flush();
    c_.abort_group();
    signal_ = sig;
  }

  void say_bye() {
    send_up(MsgType::bye, c_.rank, {});
    up_.flush();
    over_ = true;
  }

  void report(double now) {
    Message m;
    m.type = MsgType::state;
    m.rank = c_.rank;
    m.state = clock_.sample(*c_.board, c_.policy, now);
    up_.send(m);
    // The node's ranks heard since the last report, with how long ago.
    for (auto& f : fresh_) {
      if (!f.news) continue;
      Message s;
      s.type = MsgType::state;
      s.rank = f.rank;
      s.state = f.state;
      s.age_s = std::max(0.0, now - f.at_s);
      up_.send(s);
      f.news = false;
    }
  }

  void send_up(MsgType type, int rank, const std::string& text) {
    Message m;
    m.type = type;
    m.rank = rank;
    m.text = text;
    up_.send(m);
  }

  // ---- from the parent ----
  void read_parent(double now) {
    const bool alive = up_.receive();
    if (!live_) {
      // In the set-up, the ranks agree on errors over MPI: a parent that
      // hangs up then is one that is giving the set-up up itself.
      if (!alive || up_.broken()) up_.close();
      return;
    }
    while (auto m = up_.next()) {
      up_heard_s_ = now;
      if (m->type == MsgType::stop) {           // rank 0 closed the record
        if (signal_ == 0) signal_ = m->signal;  // a run a signal ended: this rank ends as killed by it too
        return stop_here(m->text);
      }
      if (travels_up(m->type)) {
        spdlog::error("watchdog: {} sent a message of type {}, which only travels up; stopping", parent_name_,
                      static_cast<int>(m->type));
        return stop_here("protocol error");
      }
    }
    if (alive && !up_.broken()) return;
    spdlog::error("lost contact with {}: {}; it was killed or crashed, or its host is gone. Stopping.", parent_name_,
                  up_.error());
    stop_here(fmt::format("lost contact with {}", parent_name_));
  }

  void parent_silent(double now) {
    const std::string what = fmt::format("{} has not answered the watchdog for {:.1f} s (its process is stopped, or "
                                         "its host is gone)",
                                         parent_name_, now - up_heard_s_);
    spdlog::error("{}: ending the job. Rank 0 writes the record, which is left without its closing line.", what);
    // If it comes back, it reads this before anything else: nobody is to blame for what it missed.
    send_up(MsgType::leaving, c_.rank, what);
    up_.flush();
    stop_here(what);
  }

  void stop_here(const std::string& why) {
    if (hub_ && !c_.leave) c_.abort_before_stopping_others();  // a leader: its node's ranks leave at once
    if (hub_) hub_->stop_all(why, kRelayStopDrainS, signal_);
    if (signal_ != 0 && !c_.leave) c_.die_of_signal(signal_);  // rank 0 has sealed the record (or is gone)
    over_ = true;
    const int code = signal_ != 0 ? 128 + signal_ : kExitRunError;
    if (c_.leave)
      c_.leave(code);
    else
      c_.leave_job(code);
  }

  // ---- from this node's ranks (leaders only) ----
  void joined(int) override {}

  void message(int child, const Message& m, double now) override {
    (void)child;
    if (m.type == MsgType::state) {
      Fresh& f = fresh_[index_in_node(m.rank)];
      f.state = m.state;
      f.at_s = now - m.age_s;
      f.news = true;
      return;
    }
    up_.send(m);  // bye, fail, signal, lost, leaving: on at once
  }

  void gone(int child, const std::string& why, double) override { send_up(MsgType::lost, child, why); }

  std::size_t index_in_node(int rank) const {
    const auto& ranks = tree_.ranks_of_node(tree_.node_of(c_.rank));
    return static_cast<std::size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) - ranks.begin());
  }

  struct Fresh {
    int rank = -1;
    StateReport state;
    double at_s = 0;  // when it was heard (this rank's clock)
    bool news = false;
  };

  const Config& c_;
  Control& control_;
  Tree tree_;
  // SIGTERM, SIGINT, SIGHUP while this loop runs (core/ending_signals.hpp), unless the rank forwards its own.
  std::optional<SignalSubscription> signals_;
  int signal_fd_ = -1;
  Cadence cadence_;
  std::optional<Hub> hub_;
  Connection up_;
  std::string parent_name_;
  double up_heard_s_ = 0;
  StallClock clock_;
  std::vector<Fresh> fresh_;
  bool live_ = false;
  bool finishing_ = false;
  bool over_ = false;
  int signal_ = 0;           // a signal this rank received, waiting for rank 0's stop
  double signal_at_s_ = -1;  // when the loop first saw it
};

}  // namespace

void run_relay(const Config& config, Control& control, Fd local_listener) {
  Relay(config, control, std::move(local_listener)).loop();
}

}  // namespace fb::watch
