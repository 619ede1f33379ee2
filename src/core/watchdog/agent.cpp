#include "agent.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <stdexcept>

namespace fb::watch {

RootListeners listen_root(const Tree& tree, std::uint64_t token, const std::string& host,
                          const std::vector<std::string>& addresses, bool chosen) {
  RootListeners out;
  out.endpoint.token = token;
  out.endpoint.host = host;
  if (tree.nodes() > 1 || chosen)
    out.tcp = listen_tcp(addresses, chosen, out.endpoint.port, out.endpoint.addresses);
  return out;
}

Fd listen_node(const Tree& tree, int rank, std::uint64_t token) {
  if (!tree.is_leader(rank) || tree.ranks_of_node(tree.node_of(rank)).size() < 2) return {};
  return listen_local(local_name(token, tree.node_of(rank)));
}

std::string connect_parent(const Tree& tree, int rank, const Endpoint& root, const std::string& my_host,
                           Connection& out) {
  const int parent = tree.parent(rank);
  if (parent == 0 && tree.is_leader(rank)) return connect_tcp_parent(root, rank, my_host == root.host, out);
  return connect_local_parent(local_name(root.token, tree.node_of(rank)), root.token, rank, parent, out);
}

Agent::Agent(Config config, std::vector<Fd> tcp_listeners, Fd local_listener) : config_(std::move(config)) {
  // spdlog makes its registry on first use; make it here, before the thread
  // that logs from it exists (thread creation orders the two; the library's
  // own lazy start, uninstrumented, is invisible to ThreadSanitizer).
  spdlog::default_logger_raw();
  if (config_.rank == 0)
    thread_ = std::thread([this, tcp = std::move(tcp_listeners), local = std::move(local_listener)]() mutable {
      run_monitor(config_, control_, std::move(tcp), std::move(local));
    });
  else
    thread_ = std::thread([this, local = std::move(local_listener)]() mutable {
      run_relay(config_, control_, std::move(local));
    });
}

Agent::~Agent() { cancel(); }

void Agent::attach(Connection uplink) {
  Request r{Request::attach, {}, {}};
  r.uplink.emplace(std::move(uplink));
  control_.post(std::move(r));
}

void Agent::cancel() {
  if (!thread_.joinable()) return;
  control_.post({Request::cancel, {}, {}});
  thread_.join();
}

void Agent::finish() {
  if (!thread_.joinable()) return;
  control_.post({Request::finish, {}, {}});
  thread_.join();
}

Control::Control() {
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("watchdog: cannot create a pipe");
  wake_read_ = wake[0];
  wake_write_ = wake[1];
}

Control::~Control() {
  ::close(wake_read_);
  ::close(wake_write_);
}

void Control::post(Request r) {
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(r));
  }
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_write_, &byte, 1);
}

std::vector<Request> Control::take() {
  char buf[64];
  while (::read(wake_read_, buf, sizeof(buf)) > 0) {
  }
  std::lock_guard lock(mutex_);
  std::vector<Request> out(std::make_move_iterator(requests_.begin()), std::make_move_iterator(requests_.end()));
  requests_.clear();
  return out;
}

void Control::report_setup(int missing, const std::string& error) {
  std::lock_guard lock(mutex_);
  if (missing == missing_ && error == setup_error_) return;
  missing_ = missing;
  setup_error_ = error;
  setup_cv_.notify_all();
}

std::string Control::wait_setup(double deadline_s) {
  std::unique_lock lock(mutex_);
  while (missing_ != 0 && setup_error_.empty()) {
    const double left = deadline_s - monotonic_s();
    if (left <= 0) return {};
    setup_cv_.wait_for(lock, std::chrono::duration<double>(std::min(left, 0.1)));
  }
  return setup_error_;
}

StateReport StallClock::sample(const ProgressBoard& board, const TimeoutPolicy& policy, double now_s) {
  const ProgressSnapshot at = board.read();
  if (since_s_ < 0 || at.step != last_.step || at.iteration != last_.iteration) since_s_ = now_s;
  last_ = at;
  return {at, now_s - since_s_, policy.limit_s(at.bytes_per_iteration)};
}

}  // namespace fb::watch
