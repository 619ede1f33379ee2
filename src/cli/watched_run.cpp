#include "watched_run.hpp"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/watch_host.hpp"

namespace fb::cli {

WatchedRun::WatchedRun(const Comm& world, const NodeMap& nodes, watch::TimeoutPolicy policy, std::string command)
    : command_(std::move(command)), board_(WatchHost::get() ? &WatchHost::get()->board() : &own_board_) {
  if (policy.enabled())
    watchdog_ = std::make_unique<Watchdog>(world, nodes, policy, *board_,
                                           [this](const watch::RunEnd& end) { close_early(end); });
}

WatchedRun::~WatchedRun() = default;

void WatchedRun::open_record(const std::function<void()>& open, CloseRecord close) {
  std::lock_guard lock(mutex_);
  started_ = std::chrono::steady_clock::now();
  open();
  close_ = std::move(close);
}

// The watchdog's thread, rank 0, while the engine's thread may be stuck: no MPI.
void WatchedRun::close_early(const watch::RunEnd& end) const {
  // A plain fprintf, not user_log(), on this death path: unbuffered stderr
  // and its stream lock only, no logger (whose sink mutex a stuck engine
  // thread may hold mid-line) between the reason and the person reading it.
  std::fprintf(stderr, "fabricbench %s: %s\n", command_.c_str(), end.message.c_str());
  std::lock_guard lock(mutex_);
  if (!close_) return;  // before the record was opened
  Summary summary;
  summary.status = end.status;
  summary.reason = end.message;
  summary.report = end.report;
  summary.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  summary.exit_code = end.exit_code;
  close_(summary);
}

void WatchedRun::guard(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    if (watchdog_) watchdog_->fail(e.what());
    Comm::world().abort(kExitRunError);
    throw;
  }
}

void WatchedRun::run(const std::function<void()>& body) {
  guard(body);
  if (watchdog_) watchdog_->finish();
}

}  // namespace fb::cli
