// The watchdog's real loops and sockets in one process, without MPI: whole
// jobs of agents (agent.hpp) on simulated nodes, each rank with its own
// progress board, the test playing the engines; and single hubs fed by
// hand-made connections (malformed frames, strangers, a full descriptor
// table). Timings are judged against the timeout with wide margins.
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "agent.hpp"
#include "hub.hpp"
#include "local_job.hpp"
#include "loop.hpp"

namespace fb::watch {
namespace {

using namespace std::chrono_literals;
using test::LocalJob;
using test::now_s;

TEST(WatchAgents, AHangBehindANodeLeaderIsNamedWithinTheTimeout) {
  LocalJob job(12, 4, 1.5);  // three nodes; rank 9 reports through rank 8
  job.start();
  const double planted = now_s();
  job.plant_hang(9);
  const auto end = job.verdict(1.5 + 8);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "hang") << end->message;
  EXPECT_EQ(end->report.get()["stuck_ranks"], std::vector<int>{9}) << end->message;
  EXPECT_EQ(end->report.get()["waiting_ranks"].size(), 11u);
  EXPECT_EQ(end->report.get()["stuck"][0]["host"], "node-2");
  EXPECT_LE(job.ended_at_s() - planted, 1.5 + 5);
  // Rank 0 told everyone to stop, through the leaders.
  for (int r = 0; r < 12; ++r)
    for (int i = 0; i < 100 && job.exit_code(r) < 0; ++i) std::this_thread::sleep_for(20ms);
  for (int r = 0; r < 12; ++r) EXPECT_EQ(job.exit_code(r), 3) << "rank " << r;
}

// A signal that reaches one rank ends the run as killed, and every rank
// leaves as killed by it (128 + n), the ranks the launcher's signal has not
// reached yet included: before, they left with 3 when rank 0's stop came
// first, and the job's status was whichever rank mpirun saw end first (the
// double's SimSignal test failed so under load). In this one process the
// signal goes to the newest subscriber, whichever rank's loop that is.
TEST(WatchAgents, ASignalOnOneRankEndsEveryRankAsKilledByIt) {
  LocalJob job(6, 2, 30);  // three nodes: the stop reaches ranks through their leaders too
  job.start();
  job.start_progress();
  std::this_thread::sleep_for(300ms);  // every loop running, and subscribed
  ASSERT_EQ(::raise(SIGTERM), 0);
  const auto end = job.verdict(10);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "killed") << end->message;
  EXPECT_EQ(end->exit_code, 128 + SIGTERM);
  for (int r = 0; r < 6; ++r)
    for (int i = 0; i < 250 && job.exit_code(r) < 0; ++i) std::this_thread::sleep_for(20ms);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(job.exit_code(r), 128 + SIGTERM) << "rank " << r;
}

TEST(WatchAgents, EveryRankFinishingEndsWithoutAVerdict) {
  LocalJob job(9, 3, 1.0);
  job.start();
  for (int r = 0; r < 9; ++r) job.board(r).enter(Phase::idle);
  std::this_thread::sleep_for(300ms);
  std::vector<std::thread> finishing;
  for (int r = 8; r >= 0; --r) finishing.emplace_back([&job, r] { job.agent(r).finish(); });
  for (auto& t : finishing) t.join();
  EXPECT_FALSE(job.verdict(0));
  for (int r = 0; r < 9; ++r) EXPECT_EQ(job.exit_code(r), -1) << "rank " << r;
}

// The end of a run waits for the ranks' byes, never for the watchdog's own
// clock: with every clock stopped the job still finishes. (Rank 0 used to
// end only at its next judging period after the last bye, after an idle
// poll tick: up to 0.2 s of every run's wall time; with a stopped clock,
// never.) The clocks go on after 30 s, so the old behaviour fails the test
// instead of hanging it.
TEST(WatchAgents, FinishingWaitsForTheByesNotForTheClock) {
  LocalJob job(6, 3, 1.0);
  job.start();
  for (int r = 0; r < 6; ++r) job.board(r).enter(Phase::idle);
  std::this_thread::sleep_for(300ms);  // every rank reported at least once
  job.freeze_clocks();
  std::atomic<int> finished{0};
  std::vector<std::thread> finishing;
  for (int r = 5; r >= 0; --r) finishing.emplace_back([&job, &finished, r] {
    job.agent(r).finish();
    ++finished;
  });
  for (int i = 0; i < 3000 && finished < 6; ++i) std::this_thread::sleep_for(10ms);
  const int finished_frozen = finished;
  job.thaw_clocks();
  for (auto& t : finishing) t.join();
  EXPECT_EQ(finished_frozen, 6) << "ranks that finished while the clocks stood still";
  EXPECT_FALSE(job.verdict(0));
}

TEST(WatchAgents, ARankGoneBehindItsLeaderIsLostAndNamed) {
  LocalJob job(8, 4, 20);
  job.start();
  std::this_thread::sleep_for(300ms);
  job.agent(6).cancel();  // its thread ends without a goodbye: its socket closes, as when killed
  const auto end = job.verdict(5);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->status, "rank_lost");
  EXPECT_EQ(end->report.get()["lost_ranks"], std::vector<int>{6}) << end->message;
}

TEST(WatchAgents, ALeaderGoneLosesItsWholeNode) {
  LocalJob job(8, 4, 20);
  job.start();
  std::this_thread::sleep_for(300ms);
  job.agent(4).cancel();
  const auto end = job.verdict(5);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->report.get()["lost_ranks"], (std::vector<int>{4, 5, 6, 7})) << end->message;
}

// The whole job's watchdog clocks jump by 30 s at once, as after SIGSTOP and
// SIGCONT of every rank: nobody was silent, nobody is blamed.
TEST(WatchAgents, AJumpOfEveryClockIsASuspendNotASilence) {
  LocalJob job(6, 3, 1.0);
  job.start();
  job.start_progress();
  std::this_thread::sleep_for(500ms);
  job.shift_clocks(30);
  EXPECT_FALSE(job.verdict(2.5)) << job.verdict(0)->message;
  for (int r = 0; r < 6; ++r) EXPECT_EQ(job.exit_code(r), -1) << "rank " << r;
  // ... and it still watches: a hang after it is named.
  job.stop_progress();
  job.plant_hang(4);
  const auto end = job.verdict(1.0 + 8);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->report.get()["stuck_ranks"], std::vector<int>{4}) << end->message;
}

// A fake rank 0 that welcomes a leader and then never beats again.
TEST(WatchAgents, ALeaderWhoseRankZeroFellSilentEndsTheJobAndSaysSoUpstream) {
  const Tree tree({0, 1, 1}, {"node-a", "node-b"});
  int port = 0;
  std::vector<std::string> bound;
  auto listeners = listen_tcp({"127.0.0.1"}, true, port, bound);
  Fd listener = std::move(listeners[0]);
  const Endpoint root{42, port, "node-a", bound};
  std::thread fake([&] {
    pollfd p{listener.get(), POLLIN, 0};
    ::poll(&p, 1, 5000);
    Connection c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    pollfd q{c.fd(), POLLIN, 0};
    ::poll(&q, 1, 5000);
    c.receive();
    auto hello = c.next();
    Message welcome;
    welcome.type = MsgType::welcome;
    welcome.token = 42;
    c.send(welcome);
    // Read what the leader sends until it says it is leaving.
    const double until = now_s() + 15;
    while (now_s() < until) {
      ::poll(&q, 1, 100);
      if (!c.receive()) break;
      while (auto m = c.next())
        if (m->type == MsgType::leaving) {
          EXPECT_EQ(m->rank, 1);
          EXPECT_NE(m->text.find("rank 0 (node-a) has not answered the watchdog"), std::string::npos) << m->text;
          return;
        }
    }
    ADD_FAILURE() << "no leaving message";
  });
  ProgressBoard b1, b2;
  std::atomic<int> exit1{-1}, exit2{-1};
  const auto config = [&](int rank, ProgressBoard& b, std::atomic<int>& exit) {
    Config c;
    c.rank = rank;
    c.rank_node = {0, 1, 1};
    c.node_hosts = {"node-a", "node-b"};
    c.policy = TimeoutPolicy{1.0};
    c.board = &b;
    c.token = 42;
    c.leave = [&exit](int code) { exit = code; };
    return c;
  };
  Agent leader(config(1, b1, exit1), {}, listen_node(tree, 1, 42));
  Connection up;
  ASSERT_EQ(connect_parent(tree, 1, root, "node-b", up), "");
  leader.attach(std::move(up));
  Agent member(config(2, b2, exit2), {}, Fd{});
  Connection up2;
  ASSERT_EQ(connect_parent(tree, 2, root, "node-b", up2), "");
  member.attach(std::move(up2));
  ASSERT_EQ(leader.wait_children(now_s() + 5), "");
  const double t0 = now_s();
  leader.start();
  member.start();
  fake.join();
  const double gave_up = now_s() - t0;
  for (int i = 0; i < 100 && (exit1 < 0 || exit2 < 0); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(exit1, 3);
  EXPECT_EQ(exit2, 3);  // its leader stopped it
  EXPECT_GE(gave_up, 1.0 + kParentGraceS - 0.3);
  EXPECT_LE(gave_up, 1.0 + 5);
}

// ---- one hub, fed by hand ----

// Rank 0 of a one-node job of `ranks`, its hub on a local socket, run by a thread.
class HubUnderTest : public Hub::Events {
 public:
  explicit HubUnderTest(int ranks)
      : tree_(std::vector<int>(static_cast<std::size_t>(ranks), 0), {"node-a"}), token_(random_token()),
        name_(local_name(token_, 0)) {
    std::vector<Fd> l;
    l.push_back(listen_local(name_));
    hub_ = std::make_unique<Hub>(tree_, 0, token_, std::move(l));
    thread_ = std::thread([this] { run(); });
  }
  ~HubUnderTest() override {
    stop_ = true;
    thread_.join();
  }
  void joined(int) override {}
  void message(int, const Message& m, double) override {
    if (m.type == MsgType::state) ++states_;
  }
  void gone(int child, const std::string& why, double) override {
    std::lock_guard lock(mutex_);
    gone_.push_back(std::to_string(child) + ": " + why);
  }
  int raw_connect() const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path + 1, name_.data(), name_.size());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa),
                        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name_.size())),
              0);
    return fd;
  }
  std::uint64_t token() const { return token_; }
  const std::string& name() const { return name_; }
  std::atomic<int> states_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::vector<std::string> gone_;
  std::mutex mutex_;

 private:
  void run() {
    while (!stop_) {
      std::vector<pollfd> fds;
      hub_->add_fds(fds);
      ::poll(fds.data(), fds.size(), 50);
      hub_->handle(fds, now_s(), *this);
      dropped_ = hub_->dropped();
    }
  }
  Tree tree_;
  std::uint64_t token_;
  std::string name_;
  std::unique_ptr<Hub> hub_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

// Seconds until the peer closes `fd` (reading and discarding), or -1.
double seconds_until_closed(int fd, double limit_s) {
  const double t0 = now_s();
  char buf[256];
  while (now_s() - t0 < limit_s) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0 && ::recv(fd, buf, sizeof(buf), 0) <= 0) return now_s() - t0;
  }
  return -1;
}

// The children the hub has lost, once it has lost one or a second passed.
std::vector<std::string> gone_within_a_second(HubUnderTest& hub) {
  for (int i = 0; i < 50; ++i) {
    {
      std::lock_guard lock(hub.mutex_);
      if (!hub.gone_.empty()) break;
    }
    std::this_thread::sleep_for(20ms);
  }
  std::lock_guard lock(hub.mutex_);
  return hub.gone_;
}

TEST(WatchHub, MalformedOrForeignConnectionsAreDroppedAtOnceAndCounted) {
  HubUnderTest hub(3);
  // A real child joins and keeps reporting through it all.
  Connection child;
  ASSERT_EQ(connect_local_parent(hub.name(), hub.token(), 1, 0, child), "");
  const std::string garbage("\xff\xff\xff\x7fGET / HTTP/1.1\r\n", 20);
  const auto frame_of = [](Message m) { return encode(m); };
  Message wrong_token;
  wrong_token.type = MsgType::hello;
  wrong_token.token = hub.token() ^ 1;
  wrong_token.rank = 2;
  Message hijack = wrong_token;  // rank 1 is taken
  hijack.token = hub.token();
  hijack.rank = 1;
  Message not_hello;
  not_hello.type = MsgType::bye;
  not_hello.rank = 2;
  for (const std::string& bytes : {garbage, frame_of(wrong_token), frame_of(hijack), frame_of(not_hello)}) {
    const int fd = hub.raw_connect();
    ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    const double closed = seconds_until_closed(fd, 3);
    EXPECT_GE(closed, 0) << "still open after 3 s";
    EXPECT_LT(closed, 1.0);
    ::close(fd);
    Message s;
    s.type = MsgType::state;
    s.rank = 1;
    child.send(s);
  }
  for (int i = 0; i < 50 && hub.states_ < 4; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(hub.states_, 4) << "the monitor kept serving its child";
  EXPECT_EQ(hub.dropped_, 4u);
  // A child that breaks the protocol is dropped too, and it is a loss.
  const std::string bad("\x05\0\0\0\x03\x01\x02\x03\x04", 9);
  ASSERT_EQ(::send(child.fd(), bad.data(), bad.size(), MSG_NOSIGNAL), 9);
  const auto gone = gone_within_a_second(hub);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_NE(gone[0].find("1: protocol error"), std::string::npos) << gone[0];
}

// The hello and a malformed frame in one send (one read): the hub decoded
// the hello, took the child, stopped at the bad frame and kept the socket,
// since nothing more ever arrived to make it look again (the fuzzer's find).
TEST(WatchHub, AChildWhoseHelloComesWithAMalformedFrameIsDroppedAtOnce) {
  HubUnderTest hub(3);
  Message hello;
  hello.type = MsgType::hello;
  hello.token = hub.token();
  hello.rank = 2;
  const std::string bytes = encode(hello) + std::string("\x05\0\0\0\x03\x01\x02\x03\x04", 9);
  const int fd = hub.raw_connect();
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  const double closed = seconds_until_closed(fd, 3);
  ::close(fd);
  EXPECT_GE(closed, 0) << "still open after 3 s";
  EXPECT_LT(closed, 1.0);
  const auto gone = gone_within_a_second(hub);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_NE(gone[0].find("2: protocol error"), std::string::npos) << gone[0];
}

TEST(WatchChannel, RankZeroListensOnTheAdvertisedAddressesOnly) {
  int port = 0;
  std::vector<std::string> bound;
  const auto fds = listen_tcp({"127.0.0.1"}, true, port, bound);
  ASSERT_EQ(fds.size(), 1u);
  EXPECT_EQ(bound, std::vector<std::string>{"127.0.0.1"});
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  ASSERT_EQ(::getsockname(fds[0].get(), reinterpret_cast<sockaddr*>(&sa), &len), 0);
  EXPECT_EQ(ntohl(sa.sin_addr.s_addr), INADDR_LOOPBACK) << "not 0.0.0.0";
  EXPECT_EQ(ntohs(sa.sin_port), port);
  // An address this host does not have is refused, naming it.
  EXPECT_THROW(
      {
        try {
          listen_tcp({"192.0.2.254"}, true, port, bound);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("cannot listen on 192.0.2.254"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);
  // The loopback listener is tried first on rank 0's host when rank 0 has one, and only then.
  Connection c;
  const std::string none = connect_tcp_parent({1, port, "h", {}}, 1, true, c);
  EXPECT_NE(none.find("no address"), std::string::npos) << none;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FB_ASAN_RUNTIME 1
#endif
#endif

// A hub serving a poll loop in a child process whose descriptor limit
// leaves `headroom` descriptors free once the hub is listening; with
// `made_after_limit` the hub is made after the limit is set (its reserve
// descriptor then needs one of those). finish() ends the loop and returns
// the child's CPU time in it and the hub's fd_error().
class HubInChild {
 public:
  HubInChild(const Tree& tree, std::uint64_t token, int headroom, bool made_after_limit) : name_(local_name(token, 0)) {
    int ready[2], result[2], done[2];
    if (::pipe(ready) != 0 || ::pipe(done) != 0 || ::pipe(result) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::close(ready[0]);
      ::close(result[0]);
      ::close(done[1]);
      serve(tree, token, headroom, made_after_limit, ready[1], done[0], result[1]);
    }
    ::close(ready[1]);
    ::close(result[1]);
    ::close(done[0]);
    done_ = done[1];
    result_ = result[0];
    char byte;
    if (::read(ready[0], &byte, 1) != 1) throw std::runtime_error("the child died before listening");
    ::close(ready[0]);
  }
  const std::string& name() const { return name_; }
  struct Outcome {
    double cpu_s = 0;
    std::string fd_error;
  };
  Outcome finish() {
    [[maybe_unused]] ssize_t w = ::write(done_, "x", 1);
    std::string out(4096, '\0');
    out.resize(static_cast<std::size_t>(std::max<ssize_t>(0, ::read(result_, out.data(), out.size()))));
    int status = 0;
    ::waitpid(pid_, &status, 0);
    ::close(done_);
    ::close(result_);
    const auto newline = out.find('\n');
    if (newline == std::string::npos) return {-1, "the child hub wrote no result: " + out};
    return {std::stod(out.substr(0, newline)), out.substr(newline + 1)};
  }

 private:
  [[noreturn]] void serve(const Tree& tree, std::uint64_t token, int headroom, bool made_after_limit, int ready,
                          int done, int result) {
    std::vector<Fd> l;
    l.push_back(listen_local(name_));
    std::unique_ptr<Hub> hub;
    if (!made_after_limit) hub = std::make_unique<Hub>(tree, 0, token, std::move(l));
    const int probe = ::open("/dev/null", O_RDONLY);
    rlimit lim{static_cast<rlim_t>(probe + headroom), static_cast<rlim_t>(probe + headroom)};
    ::close(probe);
    ::setrlimit(RLIMIT_NOFILE, &lim);
    if (made_after_limit) hub = std::make_unique<Hub>(tree, 0, token, std::move(l));
    [[maybe_unused]] ssize_t w = ::write(ready, "x", 1);
    struct HubEvents : Hub::Events {
      void joined(int) override {}
      void message(int, const Message&, double) override {}
      void gone(int, const std::string&, double) override {}
    } events;
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    const double until = now_s() + 40;
    while (now_s() < until) {
      std::vector<pollfd> fds{{done, POLLIN, 0}};
      hub->add_fds(fds);
      ::poll(fds.data(), fds.size(), 100);
      if (fds[0].revents) break;
      hub->handle(fds, now_s(), events);
    }
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    const double cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) + (after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                       1e-6 * ((after.ru_utime.tv_usec - before.ru_utime.tv_usec) + (after.ru_stime.tv_usec - before.ru_stime.tv_usec));
    const std::string out = std::to_string(cpu) + "\n" + hub->fd_error();
    w = ::write(result, out.data(), out.size());
    ::_exit(0);
  }

  std::string name_;
  pid_t pid_ = -1;
  int done_ = -1;
  int result_ = -1;
};

// EMFILE: a listener whose queue holds connections it cannot take stays
// readable; a loop that only retries accept() spins at 100% CPU. In a child
// process (its descriptor limit lowered), a hub with 8 children expected
// and room for 2 more descriptors serves a poll loop while 8 connect and
// stay a second: it must refuse the ones that do not fit, saying why, and
// sleep.
TEST(WatchHub, AFullDescriptorTableRefusesWithTheLimitAndDoesNotSpin) {
#ifdef FB_ASAN_RUNTIME
  // With no descriptor left, the ASan/UBSan runtime cannot check memory
  // (it opens a pipe for that) and reports the hub's calls as invalid.
  GTEST_SKIP() << "the AddressSanitizer runtime needs file descriptors of its own; runs in the other builds";
#endif
  const Tree tree(std::vector<int>(9, 0), {"node-a"});
  const std::uint64_t token = random_token();
  HubInChild hub(tree, token, 2, false);
  int welcomed = 0;
  int refused = 0;
  std::string refusal;
  std::vector<Connection> kept;
  for (int r = 1; r <= 8; ++r) {
    Connection c;
    const std::string error = connect_local_parent(hub.name(), token, r, 0, c);
    if (error.empty()) {
      ++welcomed;
      kept.push_back(std::move(c));
    } else {
      ++refused;
      if (refusal.empty()) refusal = error;
    }
  }
  std::this_thread::sleep_for(1s);  // connections held, the hub polling
  const HubInChild::Outcome out = hub.finish();
  EXPECT_GE(welcomed, 1);
  EXPECT_GE(refused, 1);
  EXPECT_NE(refusal.find("ran out of file descriptors"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("open-file limit is"), std::string::npos) << refusal;
  EXPECT_LT(out.cpu_s, 0.5) << "the hub spun: " << out.cpu_s << " s of CPU in a second or more";
  EXPECT_NE(out.fd_error.find("ran out of file descriptors"), std::string::npos) << out.fd_error;
}

TEST(WatchHub, WithNoDescriptorToSayWhyEveryRankConnectingIsRefusedAtOnce) {
  // The descriptor the hub gives back to take a connection may be taken by
  // another thread of the process (MPI's own) before the hub takes it back.
  // Here the hub never has one: every rank still connecting must be refused
  // at once, not left to its handshake timeout (CI: 24 ranks, rank 0 at
  // `ulimit -n 40`, took 15 s longer to be refused than the run that fit).
#ifdef FB_ASAN_RUNTIME
  GTEST_SKIP() << "the AddressSanitizer runtime needs file descriptors of its own; runs in the other builds";
#endif
  const Tree tree(std::vector<int>(4, 0), {"node-a"});
  const std::uint64_t token = random_token();
  HubInChild hub(tree, token, 0, true);
  std::vector<std::string> errors;
  for (int r = 1; r <= 2; ++r) {
    Connection c;
    errors.push_back(connect_local_parent(hub.name(), token, r, 0, c));
  }
  const HubInChild::Outcome out = hub.finish();
  for (const std::string& e : errors) {
    EXPECT_NE(e, "") << "welcomed by a hub with no descriptor to hold it";
    EXPECT_EQ(e.find("no welcome within"), std::string::npos) << e;
  }
  EXPECT_NE(out.fd_error.find("ran out of file descriptors"), std::string::npos) << out.fd_error;
}

// A watchdog loop, rank 0's (run_monitor) or a node leader's (run_relay), in
// a forked child with room for a connection or two: the first ranks fill it
// or are refused, the hub backs its listener off, and nothing else happens
// (children are silent in the set-up). Ranks that connect after that must
// still be refused at once. The loops used to run the hub only on events:
// the back-off never ended, and each later rank waited out its 15 s
// handshake (CI: 24 ranks, rank 0's watch process at `ulimit -n 30`, refused
// 15 s late). `leader` runs `loop` for `node`; ranks leader+1 .. leader+6
// are its children.
using WatchLoopFn = std::function<void(const Config&, Control&, Fd local)>;
void expect_quiet_set_up_refuses_at_once(int leader, int node, std::vector<int> rank_node,
                                         std::vector<std::string> hosts, const WatchLoopFn& loop) {
  const std::uint64_t token = random_token();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    Config c;
    c.rank = leader;
    c.rank_node = std::move(rank_node);
    c.node_hosts = std::move(hosts);
    c.policy.fixed_s = 30;
    ProgressBoard board;
    c.board = &board;
    c.token = token;
    c.leave = [](int) {};
    int signals[2];
    if (::pipe(signals) != 0) ::_exit(2);
    c.signal_fd = signals[0];  // made before the limit: the loop's descriptors are the hub's alone
    Control control;
    std::vector<Fd> local;
    local.push_back(listen_local(local_name(token, node)));
    const int probe = ::open("/dev/null", O_RDONLY);
    const rlimit lim{static_cast<rlim_t>(probe + 3),
                     static_cast<rlim_t>(probe + 3)};  // the reserve, and 1-2 connections
    ::close(probe);
    ::setrlimit(RLIMIT_NOFILE, &lim);
    [[maybe_unused]] ssize_t w = ::write(ready[1], "x", 1);
    loop(c, control, std::move(local[0]));
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  const auto connect = [&](int rank, std::vector<Connection>& kept) {
    Connection c;
    const double t0 = now_s();
    std::string error = connect_local_parent(local_name(token, node), token, rank, leader, c);
    if (error.empty()) kept.push_back(std::move(c));
    return std::pair{error, now_s() - t0};
  };
  std::vector<Connection> kept;
  int refused_first = 0;
  for (int r = leader + 1; r <= leader + 4; ++r) refused_first += connect(r, kept).first.empty() ? 0 : 1;
  std::this_thread::sleep_for(1500ms);  // the back-off (0.5 s) over, the loop idle
  std::vector<std::pair<std::string, double>> later;
  for (int r = leader + 5; r <= leader + 6; ++r) later.push_back(connect(r, kept));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_GE(kept.size(), 1u) << "room for some";
  EXPECT_GE(refused_first, 1) << "not for all: the hub ran out";
  for (const auto& [error, seconds] : later) {
    EXPECT_NE(error.find("ran out of file descriptors"), std::string::npos) << error;
    EXPECT_LT(seconds, 5) << error;
  }
}

TEST(WatchLoop, OutOfDescriptorsARankConnectingInAQuietSetUpIsRefusedAtOnce) {
#ifdef FB_ASAN_RUNTIME
  GTEST_SKIP() << "the AddressSanitizer runtime needs file descriptors of its own; runs in the other builds";
#endif
  expect_quiet_set_up_refuses_at_once(
      0, 0, std::vector<int>(9, 0), {"node-a"},
      [](const Config& c, Control& control, Fd local) { run_monitor(c, control, {}, std::move(local)); });
}

// The same at a node leader, whose relay loop had the same defect: rank 1
// leads node-b, where ranks 2-7 connect to it.
TEST(WatchLoop, OutOfDescriptorsARankConnectingToItsNodeLeaderInAQuietSetUpIsRefusedAtOnce) {
#ifdef FB_ASAN_RUNTIME
  GTEST_SKIP() << "the AddressSanitizer runtime needs file descriptors of its own; runs in the other builds";
#endif
  std::vector<int> rank_node(9, 1);
  rank_node[0] = 0;
  expect_quiet_set_up_refuses_at_once(
      1, 1, rank_node, {"node-a", "node-b"},
      [](const Config& c, Control& control, Fd local) { run_relay(c, control, std::move(local)); });
}

TEST(WatchLoop, ACadenceNoticesItsOwnAbsenceOnly) {
  std::atomic<double> t{100};
  Cadence c([&] { return t.load(); }, own_gap_s(TimeoutPolicy{3}));
  double away = 0;
  c.after_poll(away);
  EXPECT_EQ(away, 0);
  t = 100.12;  // a tick and a bit: a loaded host
  c.after_poll(away);
  EXPECT_EQ(away, 0);
  t = 130.12;  // thirty seconds between two wake-ups
  c.after_poll(away);
  EXPECT_DOUBLE_EQ(away, 30.0);
  EXPECT_DOUBLE_EQ(own_gap_s(TimeoutPolicy{1.5}), 0.5);
  EXPECT_DOUBLE_EQ(own_gap_s(TimeoutPolicy{}), 1.0);
}

}  // namespace
}  // namespace fb::watch
