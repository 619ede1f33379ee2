#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <map>

#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/watch_report.hpp"
#include "watchdog_impl.hpp"

namespace fb::watch {
namespace {

using json = nlohmann::ordered_json;

bool live(const RankView& v) { return v.reported && !v.lost && !v.finished; }

// Judged on what the rank reported (conservative); shown with the report's age added.
bool overdue(const RankView& v) { return live(v) && v.state.limit_s > 0 && v.state.stalled_s >= v.state.limit_s; }
double stalled_now(const RankView& v) { return v.state.stalled_s + v.age_s; }

json to_json(const RankView& v) {
  const ProgressSnapshot& a = v.state.at;
  json j = {{"rank", v.rank},
            {"host", v.host},
            {"phase", std::string(name(a.phase))},
            {"op", a.op >= 0 ? std::string(name(static_cast<Op>(a.op))) : ""},
            {"scope", a.scope >= 0 ? std::string(name(static_cast<Scope>(a.scope))) : ""},
            {"bytes", a.bytes},
            {"in_place", a.in_place},
            {"iteration", a.first_iteration + a.iteration},
            {"step", a.step},
            {"stalled_s", stalled_now(v)}};
  if (v.lost) j["lost"] = v.lost_why;
  return j;
}

// Ranks grouped by where they are, one line per place: "ranks 0,1,3 (vm): <where>".
std::string grouped(const std::vector<const RankView*>& ranks) {
  std::map<std::string, std::pair<std::vector<int>, std::vector<std::string>>> places;
  for (const RankView* v : ranks) {
    auto& [list, hosts] = places[describe(v->state.at)];
    list.push_back(v->rank);
    if (std::find(hosts.begin(), hosts.end(), v->host) == hosts.end()) hosts.push_back(v->host);
  }
  std::string out;
  for (const auto& [where, who] : places) {
    // Thousands of ranks wait on one: their hosts would fill the screen.
    constexpr std::size_t kHostsShown = 8;
    std::string hosts;
    for (std::size_t i = 0; i < who.second.size() && i < kHostsShown; ++i) hosts += (i ? ", " : "") + who.second[i];
    if (who.second.size() > kHostsShown) hosts += fmt::format(" and {} more hosts", who.second.size() - kHostsShown);
    out += fmt::format("\n    rank{} {} ({}): {}", who.first.size() > 1 ? "s" : "", rank_list(who.first), hosts, where);
  }
  return out;
}

json rank_array(const std::vector<const RankView*>& ranks) {
  json a = json::array();
  for (const RankView* v : ranks) a.push_back(to_json(*v));
  return a;
}

std::vector<int> ranks_of(const std::vector<const RankView*>& views) {
  std::vector<int> out;
  for (const RankView* v : views) out.push_back(v->rank);
  return out;
}

std::vector<const RankView*> lost_ranks(const std::vector<RankView>& ranks) {
  std::vector<const RankView*> out;
  for (const auto& v : ranks)
    if (v.lost) out.push_back(&v);
  return out;
}

// Lost ranks and their last report; then where the others are now, which
// says more precisely where the run was when they went.
std::string where_lost(const std::vector<RankView>& ranks, const std::vector<const RankView*>& lost) {
  std::string out;
  for (const RankView* v : lost)
    out += fmt::format("\n    rank {} ({}): {}; its last report ({:.1f} s earlier): {}", v->rank, v->host, v->lost_why,
                       v->age_s, v->reported ? describe(v->state.at) : "none");
  std::vector<const RankView*> others;
  for (const auto& v : ranks)
    if (live(v)) others.push_back(&v);
  if (!others.empty()) out += "\n  the other ranks:" + grouped(others);
  return out;
}

}  // namespace

double TimeoutPolicy::limit_s(std::uint64_t bytes_per_iteration) const {
  if (fixed_s > 0) return fixed_s;
  if (fixed_s == 0) return 0;
  return kTimeoutFloorS + static_cast<double>(bytes_per_iteration) / kTimeoutBytesPerS;
}

std::string TimeoutPolicy::describe() const {
  if (fixed_s > 0) return fmt::format("--timeout {:g} s", fixed_s);
  if (fixed_s == 0) return "no watchdog";
  return fmt::format("automatic: {:g} s + 1 s per {:g} GB one iteration moves", kTimeoutFloorS, kTimeoutBytesPerS / 1e9);
}

std::string rank_list(const std::vector<int>& ranks) {
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  std::string out;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j > i + 1 ? fmt::format("{}-{}", r[i], r[j])
                                                  : j == i + 1 ? fmt::format("{},{}", r[i], r[j])
                                                               : fmt::format("{}", r[i]));
    i = j + 1;
  }
  return out;
}

std::string describe(const ProgressSnapshot& at) {
  std::string what = at.op >= 0 ? std::string(name(static_cast<Op>(at.op))) : "";
  if (at.scope >= 0) what += (what.empty() ? "scope " : " ") + std::string(name(static_cast<Scope>(at.scope)));
  if (at.op >= 0) what += fmt::format(" {} {}", format_bytes(at.bytes), at.in_place ? "in-place" : "out-of-place");
  if (what.empty()) what = "outside any measurement";
  const std::int64_t n = at.first_iteration + at.iteration;
  switch (at.phase) {
    case Phase::warmup:
    case Phase::timed:
    case Phase::check:
      // The counter says how many iterations were issued: 0 means it never started this step's first.
      if (at.iteration == 0) return fmt::format("{}, before {} iteration {}", what, name(at.phase), n + 1);
      return fmt::format("{}, {} iteration {}", what, name(at.phase), n);
    case Phase::sync:
      return fmt::format("{}, waiting for the other ranks (control collective)", what);
    case Phase::setup:
      return fmt::format("{}, setting up the backend", what);
    case Phase::compute:
      return fmt::format("{}, computing (the step's compute kernel)", what);
    case Phase::idle:
      break;
  }
  return fmt::format("{}, outside the sweep", what);
}

bool hang_detected(const std::vector<RankView>& ranks) {
  bool any_live = false;
  bool all_overdue = true;
  bool all_compute = true;
  for (const auto& v : ranks) {
    if (!live(v)) continue;
    any_live = true;
    if (overdue(v) && in_op(v.state.at.phase)) return true;
    all_overdue = all_overdue && overdue(v);
    all_compute = all_compute && v.state.at.phase == Phase::compute;
  }
  // A step's compute stretch (fabricbench step) may outlast the limit on
  // every rank at once: that is work, not a hang. One rank computing past
  // the limit while the others wait for it is.
  return any_live && all_overdue && !all_compute;
}

double silent_after_s(const TimeoutPolicy& policy) { return std::max(1.0, 0.5 * policy.silence_s()); }

namespace {

// Ranks that stopped answering while the others still do. A frozen rank
// (SIGSTOP, a debugger, a host swapping or gone) sends nothing: its last
// report may even be ahead of the ranks that wait on it (it issued the
// iteration, then stopped), so its position says nothing; its silence does.
std::vector<const RankView*> silent_ranks(const std::vector<RankView>& ranks, const TimeoutPolicy& policy) {
  std::vector<const RankView*> silent;
  std::size_t answering = 0;
  for (const auto& v : ranks) {
    if (!live(v)) continue;
    if (v.age_s >= silent_after_s(policy))
      silent.push_back(&v);
    else
      ++answering;
  }
  if (answering == 0) silent.clear();  // nobody to compare with: judge by position
  return silent;
}

// The ranks furthest behind are stuck; the others are waiting on them. A
// rank in a control collective waits for the others by definition: it is
// a candidate only when every rank is in one. (Where the ranks' steps line
// up, as in the sweep engine, the rank furthest behind is never in one
// anyway; where they do not, as between the pairs of `fabricbench pairs`
// and the ranks resting in that round, this keeps a resting rank from
// being named.)
void split_by_position(const std::vector<RankView>& ranks, std::vector<const RankView*>& stuck,
                       std::vector<const RankView*>& waiting) {
  bool all_sync = true;
  for (const auto& v : ranks)
    if (live(v) && v.state.at.phase != Phase::sync) all_sync = false;
  auto candidate = [&](const RankView& v) { return live(v) && (all_sync || v.state.at.phase != Phase::sync); };
  const RankView* first = nullptr;
  for (const auto& v : ranks)
    if (candidate(v) && (!first || behind(v.state.at, first->state.at))) first = &v;
  for (const auto& v : ranks) {
    if (!live(v)) continue;
    const bool same = first && candidate(v) && !behind(first->state.at, v.state.at);
    (same ? stuck : waiting).push_back(&v);
  }
}

}  // namespace

RunEnd hang_end(const std::vector<RankView>& ranks, const TimeoutPolicy& policy) {
  std::vector<const RankView*> stuck = silent_ranks(ranks, policy);
  std::vector<const RankView*> waiting;
  const bool frozen = !stuck.empty();
  if (frozen) {
    for (const auto& v : ranks)
      if (live(v) && std::find(stuck.begin(), stuck.end(), &v) == stuck.end()) waiting.push_back(&v);
  } else {
    split_by_position(ranks, stuck, waiting);
  }
  double stalled = 0;
  double limit = 0;
  for (const RankView* v : stuck) {
    stalled = std::max(stalled, stalled_now(*v));
    limit = std::max(limit, v->state.limit_s);
  }
  // A rank inside an op ahead of the stuck ones progressed after they last
  // did, so they have been stalled at least as long. Their own report may be
  // older (a loaded host sends late): this bound keeps the figure from
  // reading below the limit that triggered the report.
  for (const RankView* v : waiting)
    if (in_op(v->state.at.phase)) stalled = std::max(stalled, stalled_now(*v));
  if (frozen)
    for (const RankView* v : waiting) limit = std::max(limit, v->state.limit_s);
  const auto lost = lost_ranks(ranks);
  const std::string who = fmt::format("rank{} {}", stuck.size() > 1 ? "s" : "", rank_list(ranks_of(stuck)));
  double silent_for = 0;
  for (const RankView* v : stuck) silent_for = std::max(silent_for, v->age_s);
  const std::string verdict =
      frozen ? fmt::format("{} stopped answering the watchdog {:.1f} s ago and the others wait on {} (a stopped "
                           "process: SIGSTOP, a debugger, a host out of memory; or a host gone); {} last report{}:",
                           who, silent_for, stuck.size() > 1 ? "them" : "it", stuck.size() > 1 ? "their" : "its",
                           stuck.size() > 1 ? "s" : "")
      : !waiting.empty() ? fmt::format("{} {} behind the others", who, stuck.size() > 1 ? "are" : "is")
      : !lost.empty()    ? fmt::format("the ranks still answering are all at the same point, waiting on the lost rank{} {}",
                                       lost.size() > 1 ? "s" : "", rank_list(ranks_of(lost)))
                         : "every rank is at the same point, none is behind: the op itself does not complete "
                           "(a link, a NIC, a GPU or the library)";
  RunEnd end;
  end.status = "hang";
  end.message = fmt::format("hang: no progress for {:.1f} s (limit {:.1f} s, {}); {}{}{}", stalled, limit,
                            policy.describe(), verdict, frozen ? "" : ".\n  stuck:", grouped(stuck));
  if (!waiting.empty()) end.message += "\n  waiting on them:" + grouped(waiting);
  if (!lost.empty()) end.message += "\n  lost:" + where_lost({}, lost);
  nlohmann::ordered_json report = {{"timeout_s", limit},
                                   {"stalled_s", stalled},
                                   {"stuck_ranks", ranks_of(stuck)},
                                   {"waiting_ranks", ranks_of(waiting)},
                                   {"stuck", rank_array(stuck)},
                                   {"waiting", rank_array(waiting)}};
  if (!lost.empty()) report["lost"] = rank_array(lost);
  end.report = report;
  return end;
}

RunEnd lost_end(const std::vector<RankView>& ranks) {
  const auto lost = lost_ranks(ranks);
  RunEnd end;
  end.status = "rank_lost";
  end.message = fmt::format("lost rank{} {}: {}{}", lost.size() > 1 ? "s" : "", rank_list(ranks_of(lost)),
                            lost.size() > 1 ? "these ranks stopped" : "this rank stopped",
                            " without finishing (killed, crashed, or its host is gone):" + where_lost(ranks, lost));
  end.report = nlohmann::ordered_json{{"lost_ranks", ranks_of(lost)}, {"lost", rank_array(lost)}};
  return end;
}

JsonValue error_report(int rank, const std::string& host, const std::string& error) {
  return nlohmann::ordered_json{{"rank", rank}, {"host", host}, {"error", error}};
}

RunEnd error_end(int rank, const std::string& what, const std::vector<RankView>& ranks) {
  RunEnd end;
  end.status = "error";
  const auto it = std::find_if(ranks.begin(), ranks.end(), [&](const RankView& v) { return v.rank == rank; });
  const std::string host = it != ranks.end() ? it->host : "?";
  const std::string where = it != ranks.end() && it->reported ? "; it was at " + describe(it->state.at) : "";
  end.message = fmt::format("rank {} ({}) stopped with an error: {}{}", rank, host, what, where);
  nlohmann::ordered_json report = error_report(rank, host, what).get();
  if (it != ranks.end() && it->reported) report["at"] = to_json(*it);
  end.report = report;
  return end;
}

RunEnd killed_end(int signal, int rank, const std::vector<RankView>& ranks) {
  RunEnd end;
  end.status = "killed";
  const char* sig = sigabbrev_np(signal);
  const std::string sig_name = sig ? std::string("SIG") + sig : fmt::format("signal {}", signal);
  end.message = fmt::format("stopped by {} on rank {} (the launcher or the scheduler: a time limit, scancel, Ctrl-C, "
                            "or mpirun ending the job because a rank failed)",
                            sig_name, rank);
  nlohmann::ordered_json report = {{"signal", sig_name}, {"rank", rank}};
  const auto lost = lost_ranks(ranks);
  if (!lost.empty()) {
    end.message += "; lost before:" + where_lost(ranks, lost);
    report["lost"] = rank_array(lost);
  }
  end.report = report;
  end.exit_code = 128 + signal;
  return end;
}

}  // namespace fb::watch

namespace fb::watch {

std::string run_end_text(const RunEnd& end) {
  const nlohmann::ordered_json j = {
      {"status", end.status}, {"message", end.message}, {"report", end.report.get()}, {"exit_code", end.exit_code}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

RunEnd run_end_from_text(const std::string& text) {
  const auto j = nlohmann::ordered_json::parse(text, nullptr, false);
  RunEnd end;
  if (!j.is_object()) {
    end.status = "error";
    end.message = "watchdog: its process sent an unreadable end of the run";
    return end;
  }
  end.status = j.value("status", std::string("error"));
  end.message = j.value("message", std::string());
  end.report = j.contains("report") ? j["report"] : nlohmann::ordered_json();
  end.exit_code = j.value("exit_code", 3);
  return end;
}

}  // namespace fb::watch
