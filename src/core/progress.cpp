#include "fabricbench/core/progress.hpp"

#include <algorithm>

#include <array>
#include <chrono>

#include "fabricbench/core/backend.hpp"

namespace fb {

std::string_view name(Phase phase) {
  static constexpr std::array<std::string_view, kPhaseCount> names{"idle",  "setup", "warm-up", "timed",
                                                                   "check", "sync",  "compute"};
  const auto i = static_cast<std::size_t>(phase);
  return i < names.size() ? names[i] : "unknown";
}

bool in_op(Phase phase) { return phase == Phase::warmup || phase == Phase::timed || phase == Phase::check; }

bool behind(const ProgressSnapshot& a, const ProgressSnapshot& b) {
  if (a.step != b.step) return a.step < b.step;
  return a.iteration < b.iteration;
}

// Seqlock writer side (one writer: the engine's thread). The fences order the
// relaxed field stores between the two version bumps for readers.
void ProgressBoard::begin_write() {
  version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void ProgressBoard::end_write() { version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

void ProgressBoard::label(Op op, int scope, std::uint64_t bytes, bool in_place, std::uint64_t bytes_per_iteration) {
  begin_write();
  op_.store(static_cast<int>(op), std::memory_order_relaxed);
  scope_.store(scope, std::memory_order_relaxed);
  bytes_.store(bytes, std::memory_order_relaxed);
  in_place_.store(in_place, std::memory_order_relaxed);
  per_iteration_.store(bytes_per_iteration, std::memory_order_relaxed);
  end_write();
}

void ProgressBoard::label_scope(int scope) {
  begin_write();
  op_.store(-1, std::memory_order_relaxed);
  scope_.store(scope, std::memory_order_relaxed);
  bytes_.store(0, std::memory_order_relaxed);
  in_place_.store(false, std::memory_order_relaxed);
  per_iteration_.store(0, std::memory_order_relaxed);
  end_write();
}

void ProgressBoard::enter(Phase phase, std::int64_t first_iteration) {
  new_step(phase, step_.load(std::memory_order_relaxed) + 1, first_iteration);
}

void ProgressBoard::enter_at(Phase phase, std::int64_t step) {
  new_step(phase, std::max(step_.load(std::memory_order_relaxed) + 1, step), 0);
}

void ProgressBoard::new_step(Phase phase, std::int64_t step, std::int64_t first_iteration) {
  begin_write();
  step_.store(step, std::memory_order_relaxed);
  phase_.store(static_cast<int>(phase), std::memory_order_relaxed);
  first_.store(first_iteration, std::memory_order_relaxed);
  issued_.store(0, std::memory_order_relaxed);
  end_write();
}

ProgressSnapshot ProgressBoard::read() const {
  while (true) {
    const std::uint64_t v1 = version_.load(std::memory_order_acquire);
    ProgressSnapshot s;
    s.step = step_.load(std::memory_order_relaxed);
    s.iteration = issued_.load(std::memory_order_relaxed);
    s.first_iteration = first_.load(std::memory_order_relaxed);
    s.phase = static_cast<Phase>(phase_.load(std::memory_order_relaxed));
    s.op = op_.load(std::memory_order_relaxed);
    s.scope = scope_.load(std::memory_order_relaxed);
    s.bytes = bytes_.load(std::memory_order_relaxed);
    s.in_place = in_place_.load(std::memory_order_relaxed);
    s.bytes_per_iteration = per_iteration_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((v1 & 1) == 0 && version_.load(std::memory_order_relaxed) == v1) return s;
  }
}

void ProgressBoard::set_active_group(BackendGroup* group) {
  {
    std::lock_guard lock(group_mutex_);
    group_ = group;
    opening_ = nullptr;  // the open is over: its group (none on a rank outside it) takes its place
    if (group && open_aborted_) group->abort();
  }
  group_left_.notify_all();
}

void ProgressBoard::set_opening(Backend* backend) {
  {
    std::lock_guard lock(group_mutex_);
    opening_ = backend;
    if (backend) open_aborted_ = false;
  }
  group_left_.notify_all();
}

void ProgressBoard::set_abort_hook(void (*hook)()) {
  std::lock_guard lock(group_mutex_);
  hook_ = hook;
}

void ProgressBoard::abort_locked() {
  if (group_) {
    group_->abort();
  } else if (opening_) {
    opening_->abort_open();
    open_aborted_ = true;
  }
  if (hook_) hook_();
}

void ProgressBoard::abort_active_group() {
  std::lock_guard lock(group_mutex_);
  abort_locked();
}

// One hold of the lock from the abort to the wait, so the wait is for what was
// aborted: a group, or with none the backend being opened, and then the group
// that open hands over, aborted on arrival, if it ends in one.
bool ProgressBoard::abort_active_group_and_wait(double seconds) {
  std::unique_lock lock(group_mutex_);
  abort_locked();
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  const auto leaves = [&](BackendGroup* aborted) {
    if (!aborted || !aborted->abort_ends_wait()) return true;
    return group_left_.wait_until(lock, deadline, [&] { return group_ != aborted; });
  };
  if (group_) return leaves(group_);
  Backend* const opening = opening_;
  if (!opening || !opening->abort_open_ends_wait()) return true;
  if (!group_left_.wait_until(lock, deadline, [&] { return opening_ != opening; })) return false;
  return leaves(group_);  // the group the open handed over, aborted on arrival; none when the open threw
}

}  // namespace fb
