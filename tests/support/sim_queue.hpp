// A host double of gpu::DeviceQueue for tests: one in-order stream on a
// virtual device clock. Work queued on it runs at once (the clock advances by
// the work's cost), or is captured into the queue's graph between
// begin_capture and end_capture; a graph launch runs what was captured. It
// counts every run of queued work, so a replay nobody asked for shows as
// extra work, and it refuses what CUDA refuses (an event waited on or timed
// before it was recorded, a launch without a graph).
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_common/device_queue.hpp"

namespace fb::test {

class SimQueue final : public gpu::DeviceQueue {
 public:
  // Queues work that takes `cost_us` of device time.
  void enqueue(double cost_us, std::function<void()> work) {
    if (capturing_) {
      captured_.push_back({cost_us, std::move(work)});
      return;
    }
    run({cost_us, std::move(work)});
  }

  void ensure_events(std::size_t n) override {
    if (events_.size() < n) events_.resize(n, kNotRecorded);
  }
  void record(std::size_t e) override {
    if (capturing_) throw std::logic_error("SimQueue: an event recorded during a capture");
    events_.at(e) = clock_us;
  }
  void wait(std::size_t e) override {
    recorded(e);
    ++waits;
  }
  double elapsed_us(std::size_t from, std::size_t to) override { return recorded(to) - recorded(from); }
  void begin_capture() override {
    drop_graph();
    capturing_ = true;
    ++captures;
  }
  void end_capture() override {
    capturing_ = false;
    graph_ = std::move(captured_);
    captured_.clear();
    has_graph_ = true;
  }
  void abandon_capture() noexcept override {
    capturing_ = false;
    captured_.clear();
  }
  void upload_graph() override {
    need_graph("upload");
    ++uploads;
  }
  void launch_graph() override {
    need_graph("launch");
    ++launches;
    replaying_ = true;
    for (const Work& w : graph_) run(w);
    replaying_ = false;
  }
  void drop_graph() noexcept override {
    graph_.clear();
    has_graph_ = false;
  }

  bool capturing() const { return capturing_; }
  // Whether the work running now runs from a graph launch (a replay).
  bool replaying() const { return replaying_; }

  double clock_us = 0;  // device time so far
  int runs = 0;         // pieces of work that ran (queued or replayed)
  int captures = 0, uploads = 0, launches = 0, waits = 0;

 private:
  struct Work {
    double cost_us;
    std::function<void()> fn;
  };
  static constexpr double kNotRecorded = -1;

  void run(const Work& w) {
    w.fn();
    clock_us += w.cost_us;
    ++runs;
  }
  double recorded(std::size_t e) const {
    if (events_.at(e) == kNotRecorded)
      throw std::logic_error("SimQueue: event " + std::to_string(e) + " never recorded");
    return events_[e];
  }
  void need_graph(const char* what) const {
    if (!has_graph_) throw std::logic_error(std::string("SimQueue: graph ") + what + " without a captured graph");
  }

  std::vector<double> events_;
  bool capturing_ = false;
  std::vector<Work> captured_;
  std::vector<Work> graph_;
  bool has_graph_ = false;
  bool replaying_ = false;
};

}  // namespace fb::test
