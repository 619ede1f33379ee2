// A whole job of watchdog agents (agent.hpp) in one process, without MPI:
// ranks on simulated nodes, each with its own progress board, rank 0
// listening on 127.0.0.1; the test plays the engines (or runs the engine's
// own loops on threads of its own).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent.hpp"
#include "hub.hpp"
#include "loop.hpp"

namespace fb::watch::test {

using namespace std::chrono_literals;

inline double now_s() { return monotonic_s(); }

// Ranks on simulated nodes of `per_node`, rank 0 listening on 127.0.0.1.
class LocalJob {
 public:
  LocalJob(int ranks, int per_node, double timeout_s) : boards_(static_cast<std::size_t>(ranks)) {
    std::vector<int> rank_node;
    for (int r = 0; r < ranks; ++r) rank_node.push_back(r / per_node);
    std::vector<std::string> hosts;
    for (int n = 0; n <= (ranks - 1) / per_node; ++n) hosts.push_back("node-" + std::to_string(n));
    tree_ = std::make_unique<Tree>(rank_node, hosts);
    exits_ = std::vector<std::atomic<int>>(static_cast<std::size_t>(ranks));
    for (auto& e : exits_) e = -1;
    const std::uint64_t token = random_token();
    RootListeners root = listen_root(*tree_, token, hosts[0], {"127.0.0.1"}, true);
    endpoint_ = root.endpoint;
    for (int r = 0; r < ranks; ++r) {
      Config c;
      c.rank = r;
      c.rank_node = rank_node;
      c.node_hosts = hosts;
      c.policy = TimeoutPolicy{timeout_s};
      c.board = &boards_[static_cast<std::size_t>(r)];
      c.token = token;
      c.clock = [this] {
        const double frozen = frozen_s_.load();
        return frozen >= 0 ? frozen : now_s() + offset_s_.load();
      };
      // As leave_job does, less the _exit: the engine's group is aborted
      // from the watchdog's thread, releasing an engine blocked inside it.
      c.leave = [this, r](int code) {
        boards_[static_cast<std::size_t>(r)].abort_active_group();
        exits_[static_cast<std::size_t>(r)] = code;
      };
      if (r == 0)
        c.on_end = [this](const RunEnd& end) {
          std::lock_guard lock(mutex_);
          end_ = end;
          ended_at_s_ = now_s();
          cv_.notify_all();
        };
      Fd local = listen_node(*tree_, r, token);
      agents_.push_back(std::make_unique<Agent>(std::move(c), r == 0 ? std::move(root.tcp) : std::vector<Fd>{},
                                                std::move(local)));
    }
    for (int r = 1; r < ranks; ++r) {
      Connection up;
      const std::string error = connect_parent(*tree_, r, endpoint_, tree_->host_of(r), up);
      EXPECT_EQ(error, "") << "rank " << r;
      agents_[static_cast<std::size_t>(r)]->attach(std::move(up));
    }
    for (int r = 0; r < ranks; ++r) {
      if (!tree_->children(r).empty()) {
        EXPECT_EQ(agents_[static_cast<std::size_t>(r)]->wait_children(now_s() + 10), "") << "rank " << r;
      }
    }
  }

  ~LocalJob() { stop_progress(); }

  void start() {
    for (auto& a : agents_) a->start();
  }
  // Every rank's engine moves on, a timed iteration every 20 ms, until stop_progress().
  void start_progress() {
    for (int r = 0; r < tree_->size(); ++r) {
      board(r).label(Op::all_reduce, 0, 1024, false, 1024);
      board(r).enter(Phase::timed);
    }
    moving_ = true;
    mover_ = std::thread([this] {
      while (moving_) {
        for (auto& b : boards_) b.issued()->fetch_add(1);
        std::this_thread::sleep_for(20ms);
      }
    });
  }
  void stop_progress() {
    moving_ = false;
    if (mover_.joinable()) mover_.join();
  }
  ProgressBoard& board(int r) { return boards_[static_cast<std::size_t>(r)]; }
  Agent& agent(int r) { return *agents_[static_cast<std::size_t>(r)]; }
  int exit_code(int r) const { return exits_[static_cast<std::size_t>(r)]; }
  const Tree& tree() const { return *tree_; }
  const Endpoint& endpoint() const { return endpoint_; }
  // Every watchdog clock of the job jumps (a suspended job seen from inside).
  void shift_clocks(double s) { offset_s_ = offset_s_.load() + s; }
  // Every watchdog clock of the job stops (time passes for nothing the
  // watchdog decides by its clock), and goes on.
  void freeze_clocks() { frozen_s_ = now_s() + offset_s_.load(); }
  void thaw_clocks() { frozen_s_ = -1; }
  // Rank 0's verdict, if one comes within `wait_s`.
  std::optional<RunEnd> verdict(double wait_s) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return end_.has_value(); });
    return end_;
  }
  double ended_at_s() {
    std::lock_guard lock(mutex_);
    return ended_at_s_;
  }

  // Every rank inside a timed all_reduce at iteration 6, but `behind` at 5:
  // it never issued the sixth, the others wait in it.
  void plant_hang(int behind) {
    for (int r = 0; r < tree_->size(); ++r) {
      auto& b = board(r);
      b.label(Op::all_reduce, 0, 1 << 20, false, 1 << 20);
      b.enter(Phase::timed);
      b.issued()->store(r == behind ? 5 : 6);
    }
  }

 private:
  std::vector<ProgressBoard> boards_;
  std::unique_ptr<Tree> tree_;
  Endpoint endpoint_;
  std::vector<std::atomic<int>> exits_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::atomic<double> offset_s_{0};
  std::atomic<double> frozen_s_{-1};
  std::atomic<bool> moving_{false};
  std::thread mover_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<RunEnd> end_;
  double ended_at_s_ = 0;
};

}  // namespace fb::watch::test
