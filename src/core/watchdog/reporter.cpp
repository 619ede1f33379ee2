// The watchdog loop of every rank but 0: report this rank's state to rank 0
// four times a second, and stop when rank 0 says so or is gone.
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "fabricbench/core/errors.hpp"
#include "watchdog_impl.hpp"

namespace fb {
namespace {

constexpr int kTickMs = 100;
constexpr double kReportPeriodS = 0.25;

class Reporter {
 public:
  explicit Reporter(Watchdog::Impl& w) : w_(w), signal_fd_(install_signal_pipe()) {}
  ~Reporter() { uninstall_signal_pipe(); }

  void loop() {
    double next_report = 0;
    while (true) {
      const double now = monotonic_s();
      if (now >= next_report) {
        report(now);
        next_report = now + kReportPeriodS;
      }
      pollfd fds[3] = {{w_.wake_read, POLLIN, 0}, {signal_fd_, POLLIN, 0}, {w_.root.fd(), POLLIN, 0}};
      if (::poll(fds, 3, kTickMs) <= 0) continue;
      if (fds[0].revents && on_request(w_.take())) return;
      if (fds[1].revents) on_signal();
      if (fds[2].revents) read_root();
    }
  }

 private:
  void report(double now) {
    watch::Message m;
    m.type = watch::MsgType::state;
    m.state = w_.clock.sample(*w_.board, w_.policy, now);
    w_.root.send(m);
  }

  // True when the loop should end (the sweep is over on this rank).
  bool on_request(const Request& r) {
    watch::Message m;
    if (r.kind == Request::finish) {
      m.type = watch::MsgType::bye;
      w_.root.send(m);
      return true;
    }
    if (r.kind == Request::fail) {
      report(monotonic_s());  // where it failed, for rank 0's message
      m.type = watch::MsgType::fail;
      m.text = r.what;
      w_.root.send(m);
    }
    return false;
  }

  // Tell rank 0 first, so that the record says the job was stopped by a
  // signal rather than that this rank was lost.
  void on_signal() {
    unsigned char sig = 0;
    if (::read(signal_fd_, &sig, 1) != 1) return;
    watch::Message m;
    m.type = watch::MsgType::signal;
    m.signal = sig;
    w_.root.send(m);
    w_.board->abort_active_group();
    die_of(sig);
  }

  void read_root() {
    const bool alive = w_.root.receive();
    while (auto m = w_.root.next())
      if (m->type == watch::MsgType::stop) leave_job(w_.board, kExitRunError);  // rank 0 closed the record
    if (alive) return;
    spdlog::error("lost contact with rank 0 ({}): {}; it was killed or crashed, or its host is gone. Stopping.",
                  w_.hosts.at(0), w_.root.error());
    leave_job(w_.board, kExitRunError);
  }

  Watchdog::Impl& w_;
  int signal_fd_;
};

}  // namespace

void Watchdog::Impl::run_reporter() { Reporter(*this).loop(); }

}  // namespace fb
