#include "agent.hpp"

#include "fabricbench/core/comm.hpp"
#include "port.hpp"

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

namespace fb::watch {

LocalPort::LocalPort(Config config) : config_(std::move(config)), tree_(config_.rank_node, config_.node_hosts) {}

std::string LocalPort::listen_root(std::string& endpoint_text) {
  try {
    bool chosen = false;
    const auto addresses = advertised_addresses(&chosen);
    root_ = watch::listen_root(tree_, random_token(), host_name(), addresses, chosen);
    endpoint_text = to_text(root_.endpoint);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string LocalPort::listen_node(std::uint64_t token) {
  config_.token = token;
  try {
    local_ = watch::listen_node(tree_, config_.rank, token);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string LocalPort::connect(const std::string& endpoint_text, const std::string& my_host) {
  const std::optional<Endpoint> endpoint = endpoint_from_text(endpoint_text);
  if (!endpoint) return "watchdog: could not read rank 0's address '" + endpoint_text + "'";
  agent_ = std::make_unique<Agent>(config_, std::move(root_.tcp), std::move(local_));
  if (config_.rank == 0) return {};
  Connection up;
  std::string error = connect_parent(tree_, config_.rank, *endpoint, my_host, up);
  if (error.empty()) agent_->attach(std::move(up));
  return error;
}

std::string LocalPort::wait_children(double deadline_s) {
  if (!agent_ || tree_.children(config_.rank).empty()) return {};
  return agent_->wait_children(deadline_s);
}

void LocalPort::start() {
  if (agent_) agent_->start();
}
void LocalPort::fail(const std::string& what) {
  if (agent_) agent_->fail(what);
}
void LocalPort::finish() {
  if (agent_) agent_->finish();
}
void LocalPort::cancel() {
  if (agent_) agent_->cancel();
}
bool LocalPort::running() const { return agent_ && agent_->running(); }

}  // namespace fb::watch
