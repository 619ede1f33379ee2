// The one owner of the signals that end a run (SIGTERM, SIGINT, SIGHUP).
// The process's handler writes the signal's number as one byte to the pipe
// of the newest subscription (all a handler may safely do); that
// subscriber's thread does the rest. Subscriptions stack: the watchdog's
// loop, subscribed for the watched part of a run, takes the signals from
// storage's cleanup, subscribed for the whole command, which has them again
// when the loop ends; diagnose's sampling loop subscribes while it samples.
// With no subscription left, the handlers the process had before are back.
#pragma once

namespace fb {

class SignalSubscription {
 public:
  // Never throws: without a pipe, fd() is -1 (poll ignores it) and the
  // subscription receives nothing.
  SignalSubscription() noexcept;
  ~SignalSubscription();
  SignalSubscription(const SignalSubscription&) = delete;
  SignalSubscription& operator=(const SignalSubscription&) = delete;

  // Readable when a signal came: one byte, the signal's number. Non-blocking.
  int fd() const { return read_fd_; }
  // The next signal that came, 0 when none (or a wake()), without waiting.
  int take() const;
  // Makes fd() readable with a 0 byte, which is no signal: stops a thread
  // that waits on it.
  void wake() const;

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
};

// Die of `signal` as if it had not been caught: the default action, so the
// launcher sees what it sent.
[[noreturn]] void die_of(int signal);

}  // namespace fb
