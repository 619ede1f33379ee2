// Building blocks for backends that wrap another backend (fault injection,
// test hooks): everything is forwarded to the wrapped object, and a
// decorator overrides only what it changes. IterationHooks runs code around
// each iteration, outside its timed span, timing iterations with the wall
// clock: each alone for its hooks, then given their group's mean in the
// groups every other rank times (timing_groups.hpp), so a rank with hooks
// (an --inject fault) reports like its peers.
#pragma once

#include <memory>

#include "fabricbench/core/backend.hpp"

namespace fb {

class ForwardingOp : public PreparedOp {
 public:
  explicit ForwardingOp(std::unique_ptr<PreparedOp> inner) : inner_(std::move(inner)) {}
  void run() override { inner_->run(); }
  void run_timed(IterationTimes t) override { inner_->run_timed(t); }
  void start() override { inner_->start(); }
  bool finished() override { return inner_->finished(); }
  void fill_check() override { inner_->fill_check(); }
  std::uint64_t count_wrong() override { return inner_->count_wrong(); }
  bool participates() const override { return inner_->participates(); }
  bool connects_lazily() const override { return inner_->connects_lazily(); }
  double ops_per_iteration() const override { return inner_->ops_per_iteration(); }
  // The op this one wraps (corruptible() looks through decorators with it).
  PreparedOp& wrapped() { return *inner_; }

 protected:
  PreparedOp& inner() { return *inner_; }

 private:
  std::unique_ptr<PreparedOp> inner_;
};

// An op with code before each iteration (before it is issued: a rank held
// here never issued it) and after it (given the iteration's time). Iterations
// run one by one through the inner op's run().
class IterationHooks : public ForwardingOp {
 public:
  using ForwardingOp::ForwardingOp;
  void run() override {
    before();
    const double t = now_us();
    inner().run();
    after(now_us() - t);
  }
  void run_timed(IterationTimes t) override {
    for (std::size_t i = 0; i < t.start_us.size(); ++i) {
      before();
      count_issued(t.issued);
      t.start_us[i] = now_us();
      inner().run();
      t.duration_us[i] = now_us() - t.start_us[i];
      after(t.duration_us[i]);
    }
    average_in_groups(t);
  }
  // The step's asynchronous calls: the hooks around start() and completion.
  void start() override {
    before();
    started_us_ = now_us();
    pending_ = true;
    inner().start();
  }
  bool finished() override {
    const bool done = inner().finished();
    if (done && pending_) {
      pending_ = false;
      after(now_us() - started_us_);
    }
    return done;
  }

 protected:
  virtual void before() {}
  virtual void after(double /*iteration_us*/) {}

 private:
  double started_us_ = 0;
  bool pending_ = false;
};

class ForwardingGroup : public BackendGroup {
 public:
  explicit ForwardingGroup(std::unique_ptr<BackendGroup> inner) : inner_(std::move(inner)) {}
  void reserve(std::uint64_t in, std::uint64_t out) override { inner_->reserve(in, out); }
  Support allocate(const OpSpec& spec) override { return inner_->allocate(spec); }
  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override { return inner_->prepare(spec); }
  std::string path() const override { return inner_->path(); }
  void abort() override { inner_->abort(); }
  bool abort_ends_wait() const override { return inner_->abort_ends_wait(); }

 private:
  std::unique_ptr<BackendGroup> inner_;
};

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  bool simulated() const override { return inner_->simulated(); }
  bool on_gpus() const override { return inner_->on_gpus(); }
  DomainTraffic domain_traffic() const override { return inner_->domain_traffic(); }
  OpSet ops() const override { return inner_->ops(); }
  std::string_view elsewhere() const override { return inner_->elsewhere(); }
  Support supports(const OpSpec& spec) const override { return inner_->supports(spec); }
  Support fits(std::uint64_t bytes_per_rank, int local_ranks) const override {
    return inner_->fits(bytes_per_rank, local_ranks);
  }
  Support setup(const Comm& world, const RunOptions& options) override { return inner_->setup(world, options); }
  std::unique_ptr<BackendGroup> open(const Comm& comm) override { return inner_->open(comm); }
  void skip_open() override { inner_->skip_open(); }
  void abort_open() override { inner_->abort_open(); }
  bool abort_open_ends_wait() const override { return inner_->abort_open_ends_wait(); }
  std::vector<int> near_cpus() const override { return inner_->near_cpus(); }
  std::vector<std::string> notes() const override { return inner_->notes(); }

 private:
  std::unique_ptr<Backend> inner_;
};

}  // namespace fb
