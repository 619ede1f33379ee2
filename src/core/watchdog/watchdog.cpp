// Setting the watchdog up (collective) and the engine thread's side of it.
#include "fabricbench/core/watchdog.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "fabricbench/core/errors.hpp"
#include "watchdog_impl.hpp"

namespace fb {
namespace {

// How long a failing rank waits for rank 0 to end the job before ending it itself.
constexpr auto kFailGrace = std::chrono::seconds(15);

// Rank 0 listens; the others learn where over MPI (which still works now)
// and connect. Returns this rank's error, "" when connected.
std::string open_channel(Watchdog::Impl& w, const Comm& world) {
  std::string text;
  std::string error;
  if (w.rank == 0) {
    try {
      w.listener = watch::listen_any();
      w.token = watch::random_token();
      text = watch::to_text({w.token, w.listener.port, host_name(), watch::advertised_addresses()});
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  text = world.bcast_string_quiet(text, 0);
  if (w.rank == 0 || text.empty()) return error;
  const auto root = watch::endpoint_from_text(text);
  if (!root) return "watchdog: could not read rank 0's address '" + text + "'";
  // Rank 0 accepts in its thread, which starts before anyone connects (below).
  return watch::connect_to_root(*root, w.rank, host_name() == root->host, w.root);
}

}  // namespace

watch::StateReport StallClock::sample(const ProgressBoard& board, const watch::TimeoutPolicy& policy, double now_s) {
  const ProgressSnapshot at = board.read();
  if (since_s_ < 0 || at.step != last_.step || at.iteration != last_.iteration) since_s_ = now_s;
  last_ = at;
  return {at, now_s - since_s_, policy.limit_s(at.bytes_per_iteration)};
}

void Watchdog::Impl::post(Request r) {
  {
    std::lock_guard lock(request_mutex);
    request = std::move(r);
  }
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_write, &byte, 1);
}

Request Watchdog::Impl::take() {
  char buf[64];
  while (::read(wake_read, buf, sizeof(buf)) > 0) {
  }
  std::lock_guard lock(request_mutex);
  return std::exchange(request, Request{});
}

Watchdog::Watchdog(const Comm& world, const NodeMap& nodes, watch::TimeoutPolicy policy, ProgressBoard& board,
                   OnEnd on_end)
    : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  w.rank = world.rank();
  w.size = world.size();
  for (int node : nodes.rank_node) w.hosts.push_back(nodes.node_hosts.at(static_cast<std::size_t>(node)));
  w.policy = policy;
  w.board = &board;
  w.on_end = std::move(on_end);
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) throw RunError("watchdog: cannot create a pipe");
  w.wake_read = wake[0];
  w.wake_write = wake[1];

  std::string error = open_channel(w, world);
  if (w.rank == 0 && error.empty()) {
    w.running = true;
    w.thread = std::thread([&w] { w.run_monitor(); });
  }
  error = agree_on_error(world, error);
  if (!error.empty()) {
    if (w.running) finish();
    throw UsageError(error + "; set FABRICBENCH_WATCHDOG_ADDR to an address of rank 0's host that every rank can "
                             "reach, or run with --timeout 0 (no watchdog)");
  }
  if (w.rank != 0) {
    w.running = true;
    w.thread = std::thread([&w] { w.run_reporter(); });
  }
}

Watchdog::~Watchdog() {
  finish();
  ::close(impl_->wake_read);
  ::close(impl_->wake_write);
  if (impl_->listener.fd >= 0) ::close(impl_->listener.fd);
}

void Watchdog::finish() {
  if (!impl_->running.exchange(false)) return;
  impl_->post({Request::finish, {}});
  impl_->thread.join();
}

void Watchdog::fail(const std::string& what) {
  if (impl_->running) {
    impl_->post({Request::fail, what});
    // The watchdog's thread has rank 0 close the record and end the job.
    std::this_thread::sleep_for(kFailGrace);
  }
  leave_job(impl_->board, kExitRunError);
}

}  // namespace fb
