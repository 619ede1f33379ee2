// Setting the watchdog up (collective: MPI carries rank 0's address and the
// run's token, and the ranks agree on errors) and the engine thread's side.
#include "fabricbench/core/watchdog.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "fabricbench/core/watch_host.hpp"
#include "port.hpp"
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
  std::unique_ptr<watch::Port> port;
  ProgressBoard* board = nullptr;
};

Watchdog::Watchdog(const Comm& world, const NodeMap& nodes, watch::TimeoutPolicy policy, ProgressBoard& board,
                   OnEnd on_end)
    : impl_(std::make_unique<Impl>()) {
  impl_->board = &board;
  watch::Config config;
  config.rank = world.rank();
  config.rank_node = nodes.rank_node;
  config.node_hosts = nodes.node_hosts;
  config.policy = policy;
  config.board = &board;
  config.on_end = std::move(on_end);
  if (WatchHost* host = WatchHost::get()) {
    impl_->port = watch::process_port(*host, std::move(config));
  } else {
    watch::raise_fd_limit();  // one descriptor per child: take what the hard limit allows
    impl_->port = std::make_unique<watch::LocalPort>(std::move(config));
  }
  watch::Port& port = *impl_->port;
  const std::string my_host = host_name();

  // 1. Rank 0 listens and tells everyone where; leaders open their node's socket.
  std::string error;
  std::string text;
  if (world.rank() == 0) error = port.listen_root(text);
  text = world.bcast_string_quiet(text, 0);
  const std::optional<watch::Endpoint> endpoint = watch::endpoint_from_text(text);
  if (!endpoint && error.empty() && !text.empty()) error = "watchdog: could not read rank 0's address '" + text + "'";
  if (endpoint && error.empty()) error = port.listen_node(endpoint->token);
  error = agree_on_error(world, error);
  if (!error.empty()) throw UsageError(with_fix(error));

  // 2. Every rank connects to its parent; parents wait for their children.
  error = port.connect(text, my_host);
  if (!error.empty()) spdlog::debug("watchdog: rank {} could not join: {}", world.rank(), error);
  if (error.empty()) error = port.wait_children(monotonic_s() + kSetupWaitS);  // "" at once without children
  error = agree_on_error(world, error);
  if (!error.empty()) {
    port.cancel();
    throw UsageError(with_fix(error));
  }
  port.start();
}

Watchdog::~Watchdog() { finish(); }

void Watchdog::finish() {
  if (impl_->port) impl_->port->finish();
}

void Watchdog::fail(const std::string& what) {
  if (impl_->port && impl_->port->running()) {
    impl_->port->fail(what);
    // The watchdog's thread has rank 0 close the record and end the job.
    std::this_thread::sleep_for(kFailGrace);
  }
  leave_job(impl_->board, kExitRunError);
}

}  // namespace fb
