// The watchdog's rank 0 against a simulated job of thousands of ranks: the
// real monitor (agent.hpp: the loop, hub, judge and sockets fabricbench
// runs) in a process of its own, and one process speaking the wire
// protocol for every other rank: a TCP connection per simulated node
// leader, reporting its node's ranks four times a second, and node 0's
// ranks on rank 0's local socket. A fault is planted; rank 0 is measured:
// its CPU share while the job runs, its memory, and the time from the fault
// to its report.
//
//   fb_watchdog_sim --ranks 4096 --per-node 8 --timeout 3 --fault hang:2345
//                   [--steady 4] [--check [--margin 5]]
// Faults: hang:R (rank R stops progressing, still reporting: the others
// wait on it), freeze:R (rank R stops reporting, its leader still answers),
// lose-node:N (node N's leader hangs up). Prints one JSON line; with
// --check exits 1 unless rank 0 named exactly the planted rank(s) within
// the timeout + 5 s (--margin).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent.hpp"
#include "loop.hpp"

namespace fb::watch {
namespace {

using json = nlohmann::json;

constexpr double kIterationS = 0.02;  // a simulated iteration


struct Options {
  int ranks = 4096;
  int per_node = 8;
  double timeout_s = 3;
  double steady_s = 4;  // healthy run before the fault, measured
  std::string fault = "hang";
  int target = -1;
  bool check = false;
  double margin_s = 5;  // --check: the report comes within the timeout + this
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fb_watchdog_sim: %s\nusage: fb_watchdog_sim --ranks N --per-node P --timeout S "
               "--fault hang:R|freeze:R|lose-node:N [--steady S] [--check [--margin S]]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--ranks") o.ranks = std::stoi(value());
    else if (a == "--per-node") o.per_node = std::stoi(value());
    else if (a == "--timeout") o.timeout_s = std::stod(value());
    else if (a == "--steady") o.steady_s = std::stod(value());
    else if (a == "--check") o.check = true;
    else if (a == "--margin") o.margin_s = std::stod(value());
    else if (a == "--fault") {
      const std::string f = value();
      const auto colon = f.find(':');
      if (colon == std::string::npos) usage("--fault KIND:NUMBER");
      o.fault = f.substr(0, colon);
      o.target = std::stoi(f.substr(colon + 1));
    } else usage("unknown argument " + a);
  }
  const int nodes = (o.ranks + o.per_node - 1) / o.per_node;
  if (o.ranks < 2 || o.per_node < 1 || o.timeout_s <= 0) usage("--ranks >= 2, --per-node >= 1, --timeout > 0");
  if (o.fault == "lose-node" ? (o.target < 1 || o.target >= nodes) : (o.target < 1 || o.target >= o.ranks))
    usage("--fault names a rank (1..ranks-1) or a node (1..nodes-1) outside the job");
  if (o.fault != "hang" && o.fault != "freeze" && o.fault != "lose-node") usage("unknown fault " + o.fault);
  return o;
}

Tree make_tree(const Options& o) {
  std::vector<int> rank_node;
  std::vector<std::string> hosts;
  for (int r = 0; r < o.ranks; ++r) rank_node.push_back(r / o.per_node);
  for (int n = 0; n <= rank_node.back(); ++n) hosts.push_back(fmt::format("sim-{:04d}", n));
  return Tree(rank_node, hosts);
}

// When the job started, and when the fault strikes (CLOCK_MONOTONIC, shared by both processes).
struct Plan {
  double start_s = 0;
  double fault_s = 0;
};

// The iteration a simulated rank has issued at `now`: all move together
// until the fault; then the hung rank stays and the others issue one more,
// in which they wait for it.
std::int64_t iteration(const Plan& p, const Options& o, int rank, double now) {
  const auto at = [&](double t) { return static_cast<std::int64_t>((t - p.start_s) / kIterationS); };
  if (now < p.fault_s) return at(now);
  return at(p.fault_s) + (o.fault == "hang" && rank == o.target ? 0 : 1);
}

StateReport state_of(const Plan& p, const Options& o, int rank, double now) {
  StateReport s;
  s.at.step = 1;  // the step rank 0's board is in: one timed stretch
  s.at.phase = Phase::timed;
  s.at.op = static_cast<int>(Op::all_reduce);
  s.at.scope = 0;
  s.at.bytes = 1 << 20;
  s.at.bytes_per_iteration = 1 << 20;
  s.at.iteration = iteration(p, o, rank, now);
  // Its own clock: how long since its iteration last moved.
  s.stalled_s = now < p.fault_s ? std::fmod(now - p.start_s, kIterationS) : now - p.fault_s;
  s.limit_s = o.timeout_s;
  return s;
}

std::string read_line(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

void write_line(int fd, const std::string& line) {
  const std::string l = line + "\n";
  [[maybe_unused]] const ssize_t n = ::write(fd, l.data(), l.size());
}

long status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  for (std::string k; in >> k;) {
    long v = 0;
    if (k == key && in >> v) return v;
    std::string rest;
    std::getline(in, rest);
  }
  return -1;
}

double cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// ---- rank 0: the real monitor ----
[[noreturn]] void run_root(const Options& o, int to_sim, int from_sim) {
  const Tree tree = make_tree(o);
  const long rss_base = status_kib("VmRSS:");
  const std::uint64_t token = random_token();
  RootListeners root = listen_root(tree, token, tree.host_of(0), {"127.0.0.1"}, true);
  ProgressBoard board;
  std::atomic<bool> ended{false};
  json result;
  std::mutex mutex;
  Plan plan;
  Config c;
  c.rank = 0;
  c.rank_node.resize(static_cast<std::size_t>(o.ranks));
  for (int r = 0; r < o.ranks; ++r) c.rank_node[static_cast<std::size_t>(r)] = tree.node_of(r);
  for (int n = 0; n < tree.nodes(); ++n) c.node_hosts.push_back(tree.host_of(tree.leader_of_node(n)));
  c.policy = TimeoutPolicy{o.timeout_s};
  c.board = &board;
  c.token = token;
  c.on_end = [&](const RunEnd& end) {
    const double at = monotonic_s();
    std::lock_guard lock(mutex);
    const auto& report = end.report.get();
    result = {{"status", end.status},
              {"report_after_s", at - plan.fault_s},
              {"stuck_ranks", json(report.value("stuck_ranks", nlohmann::ordered_json::array()))},
              {"waiting_ranks", report.contains("waiting_ranks") ? report["waiting_ranks"].size() : 0},
              {"lost_ranks", json(report.value("lost_ranks", nlohmann::ordered_json::array()))},
              {"message", end.message.substr(0, 300)},
              // While it judges: every child's connection is still open.
              {"open_fds", static_cast<int>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                                          std::filesystem::directory_iterator{}))}};
  };
  c.leave = [&](int) { ended = true; };
  Agent agent(std::move(c), std::move(root.tcp), listen_node(tree, 0, token));
  write_line(to_sim, to_text(root.endpoint));
  const std::string joined = agent.wait_children(monotonic_s() + 120);
  write_line(to_sim, joined.empty() ? "joined" : "error " + joined);
  const std::string plan_line = read_line(from_sim);  // start and fault times
  std::sscanf(plan_line.c_str(), "%lf %lf", &plan.start_s, &plan.fault_s);
  agent.start();
  // Rank 0's own engine, on the same plan as every other rank.
  board.label(Op::all_reduce, 0, 1 << 20, false, 1 << 20);
  board.enter(Phase::timed);
  const double measure_from = plan.start_s + 1;  // set-up settled
  double cpu0 = -1, cpu1 = -1, wall0 = 0, wall1 = 0;
  while (!ended) {
    const double now = monotonic_s();
    if (cpu0 < 0 && now >= measure_from) {
      cpu0 = cpu_s();
      wall0 = now;
    }
    if (cpu1 < 0 && now >= plan.fault_s) {
      cpu1 = cpu_s();
      wall1 = now;
    }
    board.issued()->store(iteration(plan, o, 0, now) - iteration(plan, o, 0, plan.start_s));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (now > plan.fault_s + o.timeout_s + 60) break;  // no verdict: said below
  }
  agent.cancel();
  std::lock_guard lock(mutex);
  if (result.empty()) result = {{"status", "none"}};
  result["cpu_share"] = cpu1 > cpu0 && wall1 > wall0 ? (cpu1 - cpu0) / (wall1 - wall0) : -1;
  result["measured_s"] = wall1 - wall0;
  result["rss_kib"] = status_kib("VmRSS:");
  result["rss_peak_kib"] = status_kib("VmHWM:");
  result["rss_before_kib"] = rss_base;
  write_line(to_sim, result.dump());
  std::fflush(nullptr);
  ::_exit(0);
}

// ---- every other rank ----
int connect_tcp_now(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0)
    throw std::runtime_error(fmt::format("connect 127.0.0.1:{}: {}", port, std::strerror(errno)));
  return fd;
}

int connect_local_now(const std::string& name) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path + 1, name.data(), name.size());
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sa),
                          static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) != 0)
    throw std::runtime_error(fmt::format("connect @{}: {}", name, std::strerror(errno)));
  return fd;
}
struct SimConn {
  Connection conn;
  int rank = -1;               // who connected: a leader, or a rank of node 0
  std::vector<int> speaks_for;  // whose states it sends
  bool welcomed = false;
  bool open = true;
};

json run_ranks(const Options& o, int from_root, int to_root) {
  const Tree tree = make_tree(o);
  const std::string first = read_line(from_root);
  const auto endpoint = endpoint_from_text(first);
  if (!endpoint) throw std::runtime_error("no endpoint from rank 0: " + first);
  // Every child of rank 0 connects and says hello at once; the welcomes are
  // collected after (one by one would take rank 0's wake-ups in turn).
  std::vector<SimConn> conns;
  for (int r : tree.children(0)) {
    SimConn s;
    s.rank = r;
    s.speaks_for = tree.is_leader(r) ? tree.ranks_of_node(tree.node_of(r)) : std::vector<int>{r};
    s.conn = Connection(tree.is_leader(r) ? connect_tcp_now(endpoint->port) : connect_local_now(local_name(endpoint->token, 0)));
    Message hello;
    hello.type = MsgType::hello;
    hello.token = endpoint->token;
    hello.rank = r;
    if (!s.conn.send(hello)) throw std::runtime_error(fmt::format("rank {}: cannot say hello", r));
    conns.push_back(std::move(s));
  }
  for (std::size_t waiting = conns.size(); waiting > 0;) {
    std::vector<pollfd> fds;
    for (auto& s : conns) fds.push_back({s.welcomed ? -1 : s.conn.fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 30000) <= 0) throw std::runtime_error("no welcome within 30 s");
    for (std::size_t i = 0; i < conns.size(); ++i) {
      if (!fds[i].revents) continue;
      auto& s = conns[i];
      if (!s.conn.receive()) throw std::runtime_error(fmt::format("rank {}: {}", s.rank, s.conn.error()));
      if (auto m = s.conn.next()) {
        if (m->type != MsgType::welcome) throw std::runtime_error(fmt::format("rank {}: refused: {}", s.rank, m->text));
        s.welcomed = true;
        --waiting;
      }
    }
  }
  const std::string joined = read_line(from_root);
  if (joined != "joined") throw std::runtime_error("rank 0: " + joined);
  Plan plan;
  plan.start_s = monotonic_s() + 0.2;
  plan.fault_s = plan.start_s + o.steady_s;
  write_line(to_root, fmt::format("{:.9f} {:.9f}", plan.start_s, plan.fault_s));
  double next_report = plan.start_s;
  bool stopped = false;
  const double give_up = plan.fault_s + o.timeout_s + 60;
  while (!stopped && monotonic_s() < give_up) {
    const double now = monotonic_s();
    if (now >= next_report) {
      next_report += kReportPeriodS;
      for (auto& s : conns) {
        if (!s.open) continue;
        if (o.fault == "lose-node" && now >= plan.fault_s && tree.node_of(s.rank) == o.target) {
          s.conn.close();  // the leader is gone: its node with it
          s.open = false;
          continue;
        }
        for (int r : s.speaks_for) {
          if (o.fault == "freeze" && r == o.target && now >= plan.fault_s) continue;  // silent from now on
          Message m;
          m.type = MsgType::state;
          m.rank = r;
          m.age_s = r == s.rank ? 0 : 0.1;  // a leader heard its node's ranks a moment ago
          m.state = state_of(plan, o, r, now);
          s.conn.send(m);
        }
      }
    }
    // Read (and drop) rank 0's heartbeats; a stop ends the simulation.
    std::vector<pollfd> fds;
    for (auto& s : conns)
      fds.push_back({s.open ? s.conn.fd() : -1, static_cast<short>(POLLIN | (s.conn.wants_write() ? POLLOUT : 0)), 0});
    ::poll(fds.data(), fds.size(), 20);
    for (std::size_t i = 0; i < conns.size(); ++i) {
      auto& s = conns[i];
      if (!s.open || !fds[i].revents) continue;
      if (fds[i].revents & POLLOUT) s.conn.flush();
      const bool alive = s.conn.receive();
      while (auto m = s.conn.next())
        if (m->type == MsgType::stop) stopped = true;
      if (!alive) s.open = false;
    }
  }
  const std::string line = read_line(from_root);
  return json::parse(line);
}

}  // namespace
}  // namespace fb::watch

int main(int argc, char** argv) {
  using namespace fb::watch;
  const Options o = parse(argc, argv);
  raise_fd_limit();
  int down[2], up[2];  // root -> sim, sim -> root
  if (::pipe(down) != 0 || ::pipe(up) != 0) return 3;
  const pid_t pid = ::fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    ::close(down[0]);
    ::close(up[1]);
    run_root(o, down[1], up[0]);
  }
  ::close(down[1]);
  ::close(up[0]);
  json r;
  try {
    r = run_ranks(o, down[0], up[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fb_watchdog_sim: %s\n", e.what());
    ::kill(pid, SIGKILL);
    return 3;
  }
  int root_status = 0;
  ::waitpid(pid, &root_status, 0);
  const Tree tree = make_tree(o);
  r["ranks"] = o.ranks;
  r["nodes"] = tree.nodes();
  r["timeout_s"] = o.timeout_s;
  r["fault"] = fmt::format("{}:{}", o.fault, o.target);
  std::printf("%s\n", r.dump().c_str());
  if (!o.check) return 0;
  // What rank 0 must have said.
  std::vector<int> expected;
  if (o.fault == "lose-node")
    expected = tree.ranks_of_node(o.target);
  else
    expected = {o.target};
  // A hang names the rank behind as stuck; a frozen rank is lost once silent
  // for the timeout (or named stuck, if the others' stall crossed it first);
  // a node whose leader hung up is lost whole.
  const std::string status = r.value("status", "");
  const auto named = [&](const char* key) { return r[key].get<std::vector<int>>() == expected; };
  bool ok = o.fault == "hang"   ? status == "hang" && named("stuck_ranks") && r.value("waiting_ranks", 0) == o.ranks - 1
            : o.fault == "freeze" ? (status == "rank_lost" && named("lost_ranks")) || (status == "hang" && named("stuck_ranks"))
                                  : status == "rank_lost" && named("lost_ranks");
  const double after = r.value("report_after_s", 1e9);
  // Not before the timeout (a stall or a silence must reach it), within it and the margin.
  const double earliest = o.fault == "lose-node" ? 0 : o.timeout_s - 0.5;
  ok = ok && after >= earliest && after <= o.timeout_s + o.margin_s;
  if (!ok)
    std::fprintf(stderr, "fb_watchdog_sim: expected rank 0 to name %s within %.1f s of the fault\n",
                 fb::watch::rank_list(expected).c_str(), o.timeout_s + o.margin_s);
  return ok ? 0 : 1;
}
