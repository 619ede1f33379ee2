// The watch process (fabricbench/core/watch_host.hpp): forked before
// MPI_Init, steered by its rank over one socket (requests, each answered when
// it asks for an answer), asking its rank over another what only the rank can
// do (the closer thread). Frames are a count and length-prefixed fields;
// the rank's signal pipe travels with the configuration (SCM_RIGHTS).
#include "fabricbench/core/watch_host.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fabricbench/core/ending_signals.hpp"
#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/progress.hpp"
#include "port.hpp"

namespace fb {

namespace watch {
namespace {

using Fields = std::vector<std::string>;

// What the rank asks of its watch process: Port's calls, after the
// configuration. A frame's first field names one.
enum class PortCall { config, listen_root, listen_node, connect, wait_children, start, fail, finish, cancel };
// What the watch process asks of the rank's closer thread: what only the rank can do.
enum class Ask { close, abort_group, abort_before_stopping, leave, die };

template <typename E>
struct Named {
  E value;
  std::string_view name;
};
constexpr std::array kPortCalls{
    Named<PortCall>{PortCall::config, "config"},
    Named<PortCall>{PortCall::listen_root, "listen_root"},
    Named<PortCall>{PortCall::listen_node, "listen_node"},
    Named<PortCall>{PortCall::connect, "connect"},
    Named<PortCall>{PortCall::wait_children, "wait_children"},
    Named<PortCall>{PortCall::start, "start"},
    Named<PortCall>{PortCall::fail, "fail"},
    Named<PortCall>{PortCall::finish, "finish"},
    Named<PortCall>{PortCall::cancel, "cancel"},
};
static_assert(enum_cover::covers<PortCall, kPortCalls>([](const Named<PortCall>& r) { return r.value; }),
              "kPortCalls names every PortCall in enum order");
constexpr std::array kAsks{
    Named<Ask>{Ask::close, "close"},
    Named<Ask>{Ask::abort_group, "abort_group"},
    Named<Ask>{Ask::abort_before_stopping, "abort_before_stopping"},
    Named<Ask>{Ask::leave, "leave"},
    Named<Ask>{Ask::die, "die"},
};
static_assert(enum_cover::covers<Ask, kAsks>([](const Named<Ask>& r) { return r.value; }),
              "kAsks names every Ask in enum order");

// A frame: what it asks, then its arguments.
template <typename E, std::size_t N>
Fields frame(const std::array<Named<E>, N>& table, E what, std::initializer_list<std::string> args) {
  Fields f{std::string(table[static_cast<std::size_t>(what)].name)};
  f.insert(f.end(), args);
  return f;
}
Fields frame(PortCall r, std::initializer_list<std::string> args = {}) { return frame(kPortCalls, r, args); }
Fields frame(Ask a, std::initializer_list<std::string> args = {}) { return frame(kAsks, a, args); }

// What a received frame asks; nullopt for none of the table's (an empty frame included).
template <typename E, std::size_t N>
std::optional<E> asked(const std::array<Named<E>, N>& table, const Fields& f) {
  if (f.empty()) return std::nullopt;
  for (const auto& row : table)
    if (row.name == f[0]) return row.value;
  return std::nullopt;
}

bool write_all(int fd, const char* data, std::size_t size, int pass_fd) {
  while (size > 0) {
    iovec iov{const_cast<char*>(data), size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (pass_fd >= 0) {
      std::memset(control, 0, sizeof(control));
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pass_fd = -1;  // the descriptor went with the first byte
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, char* data, std::size_t size, int* got_fd) {
  while (size > 0) {
    iovec iov{data, size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int received = -1;
      std::memcpy(&received, CMSG_DATA(c), sizeof(int));
      if (got_fd && *got_fd < 0)
        *got_fd = received;
      else
        ::close(received);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// One frame: the field count, then each field's length and bytes (32-bit
// lengths, this host's byte order: both ends are the same program).
bool send_fields(int fd, const Fields& fields, int pass_fd = -1) {
  std::string frame;
  const auto put = [&frame](std::uint32_t v) { frame.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(static_cast<std::uint32_t>(fields.size()));
  for (const auto& f : fields) {
    put(static_cast<std::uint32_t>(f.size()));
    frame += f;
  }
  return write_all(fd, frame.data(), frame.size(), pass_fd);
}

bool receive_fields(int fd, Fields& fields, int* got_fd = nullptr) {
  std::uint32_t count = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&count), sizeof(count), got_fd)) return false;
  fields.assign(count, {});
  for (auto& f : fields) {
    std::uint32_t size = 0;
    if (!read_all(fd, reinterpret_cast<char*>(&size), sizeof(size), got_fd)) return false;
    f.resize(size);
    if (size > 0 && !read_all(fd, f.data(), size, got_fd)) return false;
  }
  return true;
}

// Field i as a number of type T; 0 when absent or not one.
template <class T = long long>
T number(const Fields& f, std::size_t i) {
  T v = 0;
  if (i < f.size()) std::from_chars(f[i].data(), f[i].data() + f[i].size(), v);
  return v;
}
const std::string& text(const Fields& f, std::size_t i) {
  static const std::string none;
  return i < f.size() ? f[i] : none;
}

// ---- the watch process ----

// Whether the process `pid` is stopped (state T or t in /proc/PID/stat).
bool process_stopped(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  const char* paren = std::strrchr(buf, ')');  // the command name may hold anything but ends at the last ')'
  return paren && paren[1] == ' ' && (paren[2] == 'T' || paren[2] == 't');
}

// What only the rank can do, asked of its closer thread.
class AskRank : public RankSide {
 public:
  explicit AskRank(int hand) : hand_(hand) {}
  void close_record(const RunEnd& end) { ask(frame(Ask::close, {run_end_text(end)})); }
  void abort_group() override { ask(frame(Ask::abort_group)); }
  void abort_before_stopping_others() override { ask(frame(Ask::abort_before_stopping)); }
  [[noreturn]] void leave(int exit_code) override { end_with(frame(Ask::leave, {std::to_string(exit_code)})); }
  [[noreturn]] void die(int signal) override { end_with(frame(Ask::die, {std::to_string(signal)})); }

 private:
  void ask(const Fields& request) {
    Fields answer;
    if (send_fields(hand_, request)) receive_fields(hand_, answer);
  }
  // The rank ends itself; so does this process, at once (its rank's end, not
  // its own, is what the launcher waits for).
  [[noreturn]] void end_with(const Fields& request) {
    send_fields(hand_, request);
    ::_exit(0);
  }
  int hand_;
};

struct Served {
  std::unique_ptr<AskRank> ask;
  std::unique_ptr<LocalPort> port;
  int signal_fd = -1;
};

// "config": rank, timeout, log level, rank count, each rank's node, node
// count, each node's host; the rank's signal pipe comes with it.
Config config_from(const Fields& f, ProgressBoard* board, pid_t rank_pid, int hand, Served& served) {
  Config c;
  std::size_t i = 1;
  c.rank = static_cast<int>(number(f, i++));
  c.policy.fixed_s = std::strtod(text(f, i++).c_str(), nullptr);
  const auto level = static_cast<spdlog::level::level_enum>(number(f, i++));
  const auto ranks = static_cast<std::size_t>(number(f, i++));
  for (std::size_t r = 0; r < ranks; ++r) c.rank_node.push_back(static_cast<int>(number(f, i++)));
  const auto nodes = static_cast<std::size_t>(number(f, i++));
  for (std::size_t n = 0; n < nodes; ++n) c.node_hosts.push_back(text(f, i++));
  setup_logging(c.rank, Verbosity::normal);
  spdlog::set_level(level);
  c.board = board;
  served.ask = std::make_unique<AskRank>(hand);
  c.side = served.ask.get();
  c.signal_fd = served.signal_fd;
  c.rank_stopped = [rank_pid] { return process_stopped(rank_pid); };
  if (c.rank == 0) c.on_end = [ask = served.ask.get()](const RunEnd& end) { ask->close_record(end); };
  return c;
}

// The watchdog finished or was cancelled: say so and end (the rank waits for the answer).
[[noreturn]] void done(int requests) {
  send_fields(requests, {""});
  ::_exit(0);
}

// One request after the configuration, answered on `requests` where it asks for an answer.
void serve_one(PortCall call, const Fields& f, LocalPort& port, int requests) {
  switch (call) {
    case PortCall::config:
      return;  // served by serve(): it makes the port
    case PortCall::listen_root: {
      std::string endpoint;
      const std::string error = port.listen_root(endpoint);
      send_fields(requests, {error, endpoint});
      return;
    }
    case PortCall::listen_node:
      send_fields(requests, {port.listen_node(number<std::uint64_t>(f, 1))});
      return;
    case PortCall::connect:
      send_fields(requests, {port.connect(text(f, 1), text(f, 2))});
      return;
    case PortCall::wait_children:
      send_fields(requests, {port.wait_children(std::strtod(text(f, 1).c_str(), nullptr))});
      return;
    case PortCall::start:
      return port.start();
    case PortCall::fail:
      return port.fail(text(f, 1));
    case PortCall::finish:
      port.finish();
      return done(requests);
    case PortCall::cancel:
      port.cancel();
      return done(requests);
  }
}

[[noreturn]] void serve(int requests, int hand, ProgressBoard* board, pid_t rank_pid) {
  Served served;
  for (;;) {
    Fields f;
    int got = -1;
    const bool received = receive_fields(requests, f, &got);
    const std::optional<PortCall> call = asked(kPortCalls, f);
    if (!received || !call) {
      if (served.port) served.port->cancel();  // the rank is gone (or speaks no request): so is its watchdog
      ::_exit(0);
    }
    if (*call == PortCall::config) {
      served.signal_fd = got;
      raise_fd_limit();
      served.port = std::make_unique<LocalPort>(config_from(f, board, rank_pid, hand, served));
      send_fields(requests, {""});
      continue;
    }
    if (got >= 0) ::close(got);
    if (!served.port) ::_exit(0);  // a request out of order: nothing to serve it with
    serve_one(*call, f, *served.port, requests);
  }
}

// ---- the rank ----

// What the watch process asked, done with the rank's own Config (no
// RankSide): the same calls a watchdog thread makes.
void do_asked(Ask ask, const Fields& f, const Config& config) {
  switch (ask) {
    case Ask::close:
      if (config.on_end) config.on_end(run_end_from_text(text(f, 1)));
      return;
    case Ask::abort_group:
      return config.abort_group();
    case Ask::abort_before_stopping:
      return config.abort_before_stopping_others();
    case Ask::leave:
      return config.leave_job(static_cast<int>(number(f, 1)));
    case Ask::die:
      return config.die_of_signal(static_cast<int>(number(f, 1)));
  }
}

// The rank's closer thread: asleep in a read until the watch process asks
// for something only the rank can do, which is the run's end.
void closer(int hand, const Config& config) {
  for (;;) {
    Fields f;
    if (!receive_fields(hand, f)) return;  // the watch process finished
    if (const std::optional<Ask> ask = asked(kAsks, f)) do_asked(*ask, f, config);
    send_fields(hand, {""});  // answered even when it named nothing: the watch process waits for it
  }
}

class ProcessPort : public Port {
 public:
  ProcessPort(WatchHost& host, Config config) : host_(host), config_(std::move(config)) {
    Fields f = frame(PortCall::config,
                     {std::to_string(config_.rank), fmt_double(config_.policy.fixed_s),
                      std::to_string(static_cast<int>(spdlog::get_level())), std::to_string(config_.rank_node.size())});
    for (int n : config_.rank_node) f.push_back(std::to_string(n));
    f.push_back(std::to_string(config_.node_hosts.size()));
    for (const auto& h : config_.node_hosts) f.push_back(h);
    Fields answer;
    signals_.emplace();
    alive_ = send_fields(host_.requests_fd(), f, signals_->fd()) && receive_fields(host_.requests_fd(), answer);
    if (alive_) closer_ = std::thread([this] { closer(host_.hand_fd(), config_); });
  }
  ~ProcessPort() override { cancel(); }

  std::string listen_root(std::string& endpoint_text) override {
    Fields a = ask(frame(PortCall::listen_root));
    endpoint_text = text(a, 1);
    return a.empty() ? gone() : a[0];
  }
  std::string listen_node(std::uint64_t token) override {
    return first(ask(frame(PortCall::listen_node, {std::to_string(token)})));
  }
  std::string connect(const std::string& endpoint_text, const std::string& my_host) override {
    return first(ask(frame(PortCall::connect, {endpoint_text, my_host})));
  }
  std::string wait_children(double deadline_s) override {
    return first(ask(frame(PortCall::wait_children, {fmt_double(deadline_s)})));
  }
  void start() override { tell(frame(PortCall::start)); }
  void fail(const std::string& what) override { tell(frame(PortCall::fail, {what})); }
  void finish() override { end(PortCall::finish); }
  void cancel() override { end(PortCall::cancel); }
  bool running() const override { return alive_; }

 private:
  static std::string fmt_double(double v) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    return buf;
  }
  static std::string gone() { return "watchdog: its process ended before the run started"; }
  static std::string first(const Fields& a) { return a.empty() ? gone() : a[0]; }
  Fields ask(const Fields& request) {
    Fields answer;
    if (!alive_ || !send_fields(host_.requests_fd(), request) || !receive_fields(host_.requests_fd(), answer)) {
      alive_ = false;
      return {};
    }
    return answer;
  }
  void tell(const Fields& request) {
    if (alive_ && !send_fields(host_.requests_fd(), request)) alive_ = false;
  }
  void end(PortCall how) {
    if (alive_) ask(frame(how));
    alive_ = false;
    if (closer_.joinable()) closer_.join();
    signals_.reset();  // the handlers the rank had before are back, as when a watchdog thread's loop ends
  }

  WatchHost& host_;
  Config config_;
  std::optional<SignalSubscription> signals_;  // the rank's SIGTERM, SIGINT, SIGHUP, read by the watch process
  std::thread closer_;
  bool alive_ = false;
};

}  // namespace

std::unique_ptr<Port> process_port(WatchHost& host, Config config) {
  return std::make_unique<ProcessPort>(host, std::move(config));
}

}  // namespace watch

namespace {
std::unique_ptr<WatchHost>& the_host() {
  static std::unique_ptr<WatchHost> host;
  return host;
}
}  // namespace

WatchHost* WatchHost::get() noexcept { return the_host().get(); }

bool WatchHost::start() noexcept {
  if (the_host()) return true;
  void* shared = ::mmap(nullptr, sizeof(ProgressBoard), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return false;
  int requests[2];
  int hand[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, requests) != 0) return false;
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, hand) != 0) {
    ::close(requests[0]);
    ::close(requests[1]);
    return false;
  }
  auto* board = new (shared) ProgressBoard();
  const pid_t rank = ::getpid();
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {requests[0], requests[1], hand[0], hand[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    ::close(requests[0]);
    ::close(hand[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with its rank, however the rank ends
    if (::getppid() != rank) ::_exit(0);
    ::prctl(PR_SET_NAME, "fb-watch");
    // The rank forwards the signals that end a run; one sent to the whole
    // process group (^C) must not end this process before the rank says so.
    for (int s : {SIGTERM, SIGINT, SIGHUP}) ::signal(s, SIG_IGN);
    // Its stdout is the rank's: a launcher reading it would wait for this process too.
    if (const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC); null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
    watch::serve(requests[1], hand[1], board, rank);
  }
  ::close(requests[1]);
  ::close(hand[1]);
  auto host = std::unique_ptr<WatchHost>(new WatchHost());
  host->board_ = board;
  host->requests_ = requests[0];
  host->hand_ = hand[0];
  host->pid_ = pid;
  the_host() = std::move(host);
  return true;
}

WatchHost::~WatchHost() {
  ::close(requests_);
  ::close(hand_);
  // It ends at the closed socket; one that does not within a second is ended.
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

}  // namespace fb
