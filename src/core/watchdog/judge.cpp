#include "judge.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fb::watch {
namespace {

// After the first lost rank, wait this long for others lost with it (a node
// going down takes all its ranks), then report them together.
constexpr double kLostGraceS = 0.2;
// A leader not heard for this long (four report periods) is not answering
// for its node's ranks either.
constexpr double kLeaderQuietS = 1.0;

}  // namespace

Judge::Judge(const Tree& tree, TimeoutPolicy policy, double now) : tree_(tree), policy_(policy) {
  views_.resize(static_cast<std::size_t>(tree.size()));
  heard_s_.assign(views_.size(), now);
  for (int r = 0; r < tree.size(); ++r) {
    views_[static_cast<std::size_t>(r)].rank = r;
    views_[static_cast<std::size_t>(r)].host = tree.host_of(r);
  }
}

bool Judge::open(int rank) const {
  const RankView& v = views_[static_cast<std::size_t>(rank)];
  return !v.finished && !v.lost;
}

void Judge::state(int rank, const StateReport& s, double age_s, double now) {
  auto& v = views_[static_cast<std::size_t>(rank)];
  if (v.lost) return;
  // Never older than what we knew: a restart of the clocks (restart_clocks)
  // must not be undone by a report that waited out the same freeze.
  auto& heard = heard_s_[static_cast<std::size_t>(rank)];
  if (now - age_s < heard && v.reported) return;
  heard = std::max(heard, now - age_s);
  v.state = s;
  v.reported = true;
}

void Judge::own(const StateReport& s) {
  views_[0].state = s;
  views_[0].reported = true;
}

void Judge::bye(int rank) { views_[static_cast<std::size_t>(rank)].finished = true; }

void Judge::fail(int rank, const std::string& what) {
  // After a signal, a failure is the signal's doing: a rank's watchdog aborts
  // its backend as the signal arrives (relay.cpp), and its run then fails
  // with "communicator aborted". The record says the signal ended the run.
  if (!failure_ && signal_ == 0) failure_ = error_end(rank, what, views_);
}

void Judge::signal(int rank, int sig) {
  views_[static_cast<std::size_t>(rank)].finished = true;  // going, and said why: not lost
  if (signal_ == 0) {
    signal_ = sig;
    signal_rank_ = rank;
  }
}

void Judge::mark_lost(int rank, std::string why, double now) {
  RankView& v = views_[static_cast<std::size_t>(rank)];
  if (v.lost || v.finished) return;
  v.lost = true;
  v.lost_why = std::move(why);
  v.age_s = now - heard_s_[static_cast<std::size_t>(rank)];
  if (first_lost_s_ < 0) first_lost_s_ = now;
}

void Judge::lost(int rank, const std::string& why, double now) { mark_lost(rank, why, now); }

void Judge::link_lost(int leader, const std::string& why, double now) {
  mark_lost(leader, why, now);
  for (int r : tree_.ranks_of_node(tree_.node_of(leader)))
    if (r != leader) mark_lost(r, fmt::format("cut off with its node leader, rank {} ({})", leader, why), now);
}

void Judge::message(const Message& m, double now) {
  switch (m.type) {
    case MsgType::state:
      return state(m.rank, m.state, m.age_s, now);
    case MsgType::bye:
      return bye(m.rank);
    case MsgType::fail:
      return fail(m.rank, m.text);
    case MsgType::signal:
      return signal(m.rank, m.signal);
    case MsgType::lost:
      return lost(m.rank, m.text, now);
    case MsgType::leaving:  // the monitor's: the job is over without a verdict
    case MsgType::hello:    // the hub lets only up messages past the handshake through
    case MsgType::welcome:
    case MsgType::stop:
    case MsgType::beat:
      return;
  }
}

void Judge::child_gone(int child, const std::string& why, double now) {
  if (tree_.is_leader(child))
    link_lost(child, why, now);
  else
    lost(child, why, now);
}

void Judge::finishing() {
  finishing_ = true;
  views_[0].finished = true;
}

void Judge::restart_clocks(double now) { std::fill(heard_s_.begin(), heard_s_.end(), now); }

void Judge::check_silence(double now) {
  const double limit = policy_.silence_s();
  auto silent = [&](int r) { return now - heard_s_[static_cast<std::size_t>(r)] > limit; };
  // Leaders first: a leader that stopped answering takes its node's ranks
  // with it (we hear them only through it), and that is what to say.
  for (int n = 1; n < tree_.nodes(); ++n) {
    const int leader = tree_.leader_of_node(n);
    if (!open(leader) || !silent(leader)) continue;
    const double s = now - heard_s_[static_cast<std::size_t>(leader)];
    mark_lost(leader, fmt::format("silent for {:.1f} s (its process stopped answering, or its host is gone)", s), now);
    for (int r : tree_.ranks_of_node(n))
      if (r != leader && open(r))
        mark_lost(r, fmt::format("cut off: its node leader, rank {}, stopped answering", leader), now);
  }
  for (int r = 1; r < tree_.size(); ++r) {
    if (!open(r) || !silent(r)) continue;
    const int parent = tree_.parent(r);
    // Heard only through its leader: when the leader is quiet too, the
    // leader's silence decides (and names the node), not this rank's.
    if (parent > 0 && now - heard_s_[static_cast<std::size_t>(parent)] > kLeaderQuietS) continue;
    const std::string via = parent > 0 ? fmt::format("; its node leader, rank {}, still answers", parent) : "";
    mark_lost(r,
              fmt::format("silent for {:.1f} s (its process stopped answering, or its host is gone{})",
                          now - heard_s_[static_cast<std::size_t>(r)], via),
              now);
  }
}

bool Judge::all_done() const {
  for (int r = 1; r < tree_.size(); ++r)
    if (open(r)) return false;
  return true;
}

std::optional<RunEnd> Judge::verdict(double now) {
  for (int r = 1; r < tree_.size(); ++r)
    if (!views_[static_cast<std::size_t>(r)].lost) views_[static_cast<std::size_t>(r)].age_s = now - heard_s_[static_cast<std::size_t>(r)];
  if (failure_) return failure_;
  // A signal ends the job now: the launcher's SIGKILL may follow within a
  // second. If a rank was lost before, that is the cause (mpirun sends
  // SIGTERM to the others when a rank dies) and the record says so.
  if (signal_ != 0 && first_lost_s_ >= 0) {
    auto end = lost_end(views_);
    end.exit_code = 128 + signal_;
    return end;
  }
  if (signal_ != 0) return killed_end(signal_, signal_rank_, views_);
  // A lost rank explains why the others stopped moving: report it, not a
  // hang of those left waiting on it (once the others lost with it are in).
  // Once the sweep is over, a rank that dies on its way out costs no results.
  if (first_lost_s_ >= 0 && !finishing_) {
    if (now - first_lost_s_ >= kLostGraceS) return lost_end(views_);
    return std::nullopt;
  }
  if (policy_.enabled() && hang_detected(views_)) return hang_end(views_, policy_);
  return std::nullopt;
}

}  // namespace fb::watch
