// Setting the watchdog up (collective: MPI carries rank 0's address and the
// run's token, and the ranks agree on errors) and the engine thread's side.
#include "fabricbench/core/watchdog.hpp"

#include <chrono>
#include <thread>

#include "agent.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

// How long a failing rank waits for rank 0 to end the job before ending it itself.
constexpr auto kFailGrace = std::chrono::seconds(15);
// How long a parent waits for its children to connect: longer than a
// child tries (a connect and a handshake per address).
constexpr double kSetupWaitS = 20;

std::string with_fix(const std::string& error) { return error + "; or run with --timeout 0 (no watchdog)"; }

}  // namespace

struct Watchdog::Impl {
  std::unique_ptr<watch::Agent> agent;
  ProgressBoard* board = nullptr;
};

Watchdog::Watchdog(const Comm& world, const NodeMap& nodes, watch::TimeoutPolicy policy, ProgressBoard& board,
                   OnEnd on_end)
    : impl_(std::make_unique<Impl>()) {
  impl_->board = &board;
  // One descriptor per child: take what the hard limit allows.
  watch::raise_fd_limit();
  watch::Config config;
  config.rank = world.rank();
  config.rank_node = nodes.rank_node;
  config.node_hosts = nodes.node_hosts;
  config.policy = policy;
  config.board = &board;
  config.on_end = std::move(on_end);
  const watch::Tree tree(config.rank_node, config.node_hosts);
  const std::string my_host = host_name();

  // 1. Rank 0 listens and tells everyone where; leaders open their node's socket.
  std::string error;
  std::string text;
  watch::RootListeners root;
  if (config.rank == 0) {
    try {
      bool chosen = false;
      const auto addresses = watch::advertised_addresses(&chosen);
      root = watch::listen_root(tree, watch::random_token(), my_host, addresses, chosen);
      text = watch::to_text(root.endpoint);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  text = world.bcast_string_quiet(text, 0);
  std::optional<watch::Endpoint> endpoint = watch::endpoint_from_text(text);
  if (!endpoint && error.empty() && !text.empty()) error = "watchdog: could not read rank 0's address '" + text + "'";
  watch::Fd local;
  if (endpoint && error.empty()) {
    config.token = endpoint->token;
    try {
      local = watch::listen_node(tree, config.rank, config.token);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = agree_on_error(world, error);
  if (!error.empty()) throw UsageError(with_fix(error));

  // 2. Every rank connects to its parent; parents wait for their children.
  impl_->agent = std::make_unique<watch::Agent>(std::move(config), std::move(root.tcp), std::move(local));
  watch::Agent& agent = *impl_->agent;
  if (agent.config().rank != 0) {
    watch::Connection up;
    error = watch::connect_parent(tree, agent.config().rank, *endpoint, my_host, up);
    if (error.empty()) agent.attach(std::move(up));
  }
  if (error.empty() && !tree.children(agent.config().rank).empty())
    error = agent.wait_children(monotonic_s() + kSetupWaitS);
  error = agree_on_error(world, error);
  if (!error.empty()) {
    agent.cancel();
    throw UsageError(with_fix(error));
  }
  agent.start();
}

Watchdog::~Watchdog() { finish(); }

void Watchdog::finish() {
  if (impl_->agent) impl_->agent->finish();
}

void Watchdog::fail(const std::string& what) {
  if (impl_->agent && impl_->agent->running()) {
    impl_->agent->fail(what);
    // The watchdog's thread has rank 0 close the record and end the job.
    std::this_thread::sleep_for(kFailGrace);
  }
  leave_job(impl_->board, kExitRunError);
}

}  // namespace fb
