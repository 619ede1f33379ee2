// Rank 0's knowledge of every rank and its verdict: what each rank last
// reported and when it was heard, who said goodbye, who was lost, and when
// that makes the run hung or lost (watch_report.hpp words it). Pure: every
// call takes the time of the event (when its bytes were read, not when the
// thread last woke), so it is tested without sockets or threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/watch_report.hpp"
#include "tree.hpp"

namespace fb::watch {

class Judge {
 public:
  Judge(const Tree& tree, TimeoutPolicy policy, double now);

  // A state of `rank`, read at `now`, that the sender heard `age_s` before.
  void state(int rank, const StateReport& s, double age_s, double now);
  void own(const StateReport& s);  // rank 0's, sampled fresh
  void bye(int rank);
  void fail(int rank, const std::string& what);
  void signal(int rank, int sig);
  // A rank is gone: its connection closed without a goodbye, or broke.
  void lost(int rank, const std::string& why, double now);
  // A leader's connection is gone: the ranks of its node went with it.
  void link_lost(int leader, const std::string& why, double now);
  // What rank 0's hub passed on from a child, read at `now` (state, bye,
  // fail, signal, lost; the others are not the judge's), and a child whose
  // connection is gone without a goodbye (a leader takes its node along).
  void message(const Message& m, double now);
  void child_gone(int child, const std::string& why, double now);
  // Rank 0's own sweep is over: from now on a rank lost costs no results.
  void finishing();
  // This thread was not running for a while (the job was suspended, the
  // host stalled): nobody's silence in that time says anything.
  void restart_clocks(double now);
  // Ranks silent for the timeout count as lost.
  void check_silence(double now);

  bool all_done() const;  // every rank said goodbye or is lost
  std::optional<RunEnd> verdict(double now);
  const std::vector<RankView>& views() const { return views_; }
  int signal_number() const { return signal_; }  // 0: none reached the job

 private:
  void mark_lost(int rank, std::string why, double now);
  bool open(int rank) const;

  const Tree& tree_;
  TimeoutPolicy policy_;
  std::vector<RankView> views_;
  std::vector<double> heard_s_;
  std::optional<RunEnd> failure_;
  double first_lost_s_ = -1;
  int signal_ = 0;
  int signal_rank_ = 0;  // the first rank that reported it
  bool finishing_ = false;
};

}  // namespace fb::watch
