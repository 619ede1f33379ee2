// Rank 0's watchdog loop: accept the node leaders and its own node's ranks,
// beat to them, keep what they report (judge.hpp), and end the run when it
// is hung, a rank is lost, a rank failed or a signal arrived.
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include <optional>

#include "fabricbench/core/errors.hpp"
#include "hub.hpp"
#include "judge.hpp"
#include "loop.hpp"
#include "watchdog_impl.hpp"

namespace fb::watch {
namespace {

// How long rank 0 waits for the other ranks to leave after telling them to.
constexpr double kMonitorStopDrainS = 2;
constexpr double kJudgePeriodS = kTickMs * 1e-3;

std::vector<Fd> all_listeners(std::vector<Fd> tcp, Fd local) {
  if (local.valid()) tcp.push_back(std::move(local));
  return tcp;
}

class Monitor : public Hub::Events {
 public:
  Monitor(const Config& config, Control& control, std::vector<Fd> tcp, Fd local)
      : c_(config),
        control_(control),
        tree_(config.rank_node, config.node_hosts),
        hub_(tree_, 0, config.token, all_listeners(std::move(tcp), std::move(local))),
        judge_(tree_, config.policy, config.clock()),
        cadence_(config.clock, own_gap_s(config.policy), config.rank_stopped) {
    signal_fd_ = config.signal_fd >= 0 ? config.signal_fd : signals_.emplace().fd();
  }

  void loop() {
    double next_beat = 0;
    double next_judge = 0;
    while (!over_) {
      if (!live_) control_.report_setup(hub_.missing(), hub_.fd_error());
      std::vector<pollfd> fds{{control_.wake_fd(), POLLIN, 0}, {signal_fd_, POLLIN, 0}};
      hub_.add_fds(fds);
      cadence_.before_poll();
      const int n = ::poll(fds.data(), fds.size(), kTickMs);
      double away = 0;
      const double now = cadence_.after_poll(away);
      if (away > 0 && live_) restart(now, away);
      if (n > 0) {
        if (fds[0].revents) on_requests(now);
        if (over_) break;
        if (fds[1].revents) on_signal();
      }
      hub_.handle(fds, now, *this);  // every wake: the hub's own timers run there too (Hub::handle)
      if (abandoned_) return leave_abandoned();
      // The last bye ends the loop at once: ending needs no judging period
      // and no idle tick (they were a fifth of a trivial run's wall time).
      if (finishing_ && live_ && judge_.all_done()) break;
      if (now >= next_beat) {
        Message beat;
        beat.type = MsgType::beat;
        hub_.send_all(beat);
        next_beat = now + kReportPeriodS;
      }
      if (now < next_judge) continue;
      next_judge = now + kJudgePeriodS;
      judge_.own(clock_.sample(*c_.board, c_.policy, now));
      if (!live_) continue;
      judge_.check_silence(now);
      if (finishing_ && judge_.all_done()) break;  // the silent ones were lost meanwhile
      if (auto end = judge_.verdict(now)) return finish_run(*end);
    }
  }

 private:
  void on_requests(double now) {
    for (auto& r : control_.take()) {
      switch (r.kind) {
        case Request::start:
          live_ = true;
          restart(now, 0);
          break;
        case Request::finish:
          finishing_ = true;
          judge_.finishing();
          break;
        case Request::fail:
          judge_.own(clock_.sample(*c_.board, c_.policy, now));
          judge_.fail(0, r.what);
          break;
        case Request::attach:
          break;  // rank 0 has no parent
        case Request::cancel:
          over_ = true;
          return;
      }
    }
  }

  void restart(double now, double away_s) {
    if (away_s > 0)
      spdlog::warn("watchdog: rank 0's watchdog did not run for {:.1f} s (the job suspended, or the host stalled): "
                   "restarting every rank's silence clock",
                   away_s);
    judge_.restart_clocks(now);
    clock_.restart(now);
  }

  void on_signal() {
    unsigned char sig = 0;
    if (::read(signal_fd_, &sig, 1) == 1) judge_.signal(0, sig);
  }

  // ---- from the children ----
  void joined(int) override {}

  void message(int, const Message& m, double now) override {
    if (m.type == MsgType::leaving && !abandoned_) abandoned_ = fmt::format("rank {} ended the job: {}", m.rank, m.text);
    judge_.message(m, now);
  }

  void gone(int child, const std::string& why, double now) override { judge_.child_gone(child, why, now); }

  // ---- the end ----
  void leave(int exit_code) {
    over_ = true;
    if (c_.leave)
      c_.leave(exit_code);
    else
      c_.leave_job(exit_code);
  }

  void finish_run(const RunEnd& end) {
    if (c_.on_end) c_.on_end(end);
    if (!c_.leave) c_.abort_before_stopping_others();
    // The signal that ended the run goes with the stop: every rank ends as killed by it (128 + n), also one the
    // launcher's signal has not reached yet, so the job's status does not depend on which rank ends first.
    const int sig = judge_.signal_number();
    hub_.stop_all(end.status, kMonitorStopDrainS, sig);
    if (sig != 0 && !c_.leave) c_.die_of_signal(sig);
    leave(end.exit_code);
  }

  // The others gave up on this rank while it was not running: it has no
  // verdict to give (what it missed it cannot judge) and blames nobody.
  void leave_abandoned() {
    spdlog::error("{}; this rank (0) had stopped answering, so the record is left without its closing line (readers "
                  "report it incomplete)",
                  *abandoned_);
    if (!c_.leave) c_.abort_before_stopping_others();
    hub_.stop_all("abandoned", kMonitorStopDrainS);
    leave(kExitRunError);
  }

  const Config& c_;
  Control& control_;
  Tree tree_;
  Hub hub_;
  Judge judge_;
  // SIGTERM, SIGINT, SIGHUP while this loop runs (core/ending_signals.hpp), unless the rank forwards its own.
  std::optional<SignalSubscription> signals_;
  int signal_fd_ = -1;
  Cadence cadence_;
  StallClock clock_;
  std::optional<std::string> abandoned_;
  bool live_ = false;
  bool finishing_ = false;
  bool over_ = false;
};

}  // namespace

void run_monitor(const Config& config, Control& control, std::vector<Fd> tcp_listeners, Fd local_listener) {
  Monitor(config, control, std::move(tcp_listeners), std::move(local_listener)).loop();
}

}  // namespace fb::watch
