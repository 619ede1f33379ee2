// The fault-injecting decorator around any backend.
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "fabricbench/core/errors.hpp"
#include "fault.hpp"

namespace fb::fault {
namespace {

// A fault on this rank and how many matching iterations it has seen.
struct Armed {
  Fault fault;
  std::int64_t hits = 0;
};

void wait_us(double us) {
  // Spin for short waits (a sleep overshoots them by tens of microseconds).
  if (us > 2000) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
    return;
  }
  const double until = now_us() + us;
  while (now_us() < until) {
  }
}

class FaultOp final : public PreparedOp {
 public:
  FaultOp(std::unique_ptr<PreparedOp> inner, std::vector<Armed*> armed)
      : inner_(std::move(inner)), armed_(std::move(armed)) {}

  void run() override {
    before();
    const double t = now_us();
    inner_->run();
    after(now_us() - t);
  }

  // Iteration by iteration, so that each can be struck; the wall clock times them.
  void run_timed(IterationTimes t) override {
    for (std::size_t i = 0; i < t.start_us.size(); ++i) {
      before();
      count_issued(t.issued);
      t.start_us[i] = now_us();
      inner_->run();
      t.duration_us[i] = now_us() - t.start_us[i];
      after(t.duration_us[i]);
    }
  }

  void fill_check() override { inner_->fill_check(); }
  std::uint64_t count_wrong() override { return inner_->count_wrong(); }
  bool participates() const override { return inner_->participates(); }
  double ops_per_iteration() const override { return inner_->ops_per_iteration(); }
  void corrupt_output_element(std::uint64_t index) override { inner_->corrupt_output_element(index); }

 private:
  // Before an iteration is issued: the faults that stop a rank strike here,
  // so a hung rank is one that never issued the iteration its peers are in.
  void before() {
    for (Armed* a : armed_) {
      const std::int64_t n = a->hits++;
      if (n < a->fault.after) continue;
      switch (a->fault.kind) {
        case Kind::hang:
          if (n == a->fault.after)
            for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
          break;
        case Kind::kill:
          if (n == a->fault.after) ::raise(SIGKILL);
          break;
        case Kind::error:
          if (n == a->fault.after) throw RunError(fmt::format("injected error (--inject {})", a->fault.text));
          break;
        case Kind::slow:
          wait_us((a->fault.factor - 1) * last_us_);
          break;
        case Kind::corrupt:
          break;
      }
    }
  }

  void after(double inner_us) {
    last_us_ = inner_us;
    for (Armed* a : armed_)
      if (a->fault.kind == Kind::corrupt && a->hits > a->fault.after)
        for (std::uint64_t i = 0; i < a->fault.count; ++i) inner_->corrupt_output_element(i);
  }

  std::unique_ptr<PreparedOp> inner_;
  std::vector<Armed*> armed_;
  double last_us_ = 0;
};

class FaultGroup final : public BackendGroup {
 public:
  FaultGroup(std::unique_ptr<BackendGroup> inner, std::vector<Armed>& armed) : inner_(std::move(inner)), armed_(armed) {}
  void reserve(std::uint64_t in, std::uint64_t out) override { inner_->reserve(in, out); }
  std::string path() const override { return inner_->path(); }
  void abort() override { inner_->abort(); }
  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    std::vector<Armed*> matching;
    for (Armed& a : armed_)
      if ((!a.fault.op || *a.fault.op == spec.op) && (!a.fault.bytes || *a.fault.bytes == spec.layout.bytes))
        matching.push_back(&a);
    auto op = inner_->prepare(spec);
    if (matching.empty()) return op;  // untouched: no fault here
    return std::make_unique<FaultOp>(std::move(op), std::move(matching));
  }

 private:
  std::unique_ptr<BackendGroup> inner_;
  std::vector<Armed>& armed_;
};

class FaultBackend final : public Backend {
 public:
  FaultBackend(std::unique_ptr<Backend> inner, std::vector<Armed> armed)
      : inner_(std::move(inner)), armed_(std::move(armed)) {}
  std::string_view name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  Support supports(const OpSpec& s) const override { return inner_->supports(s); }
  Support fits(std::uint64_t bytes, int ranks) const override { return inner_->fits(bytes, ranks); }
  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    return std::make_unique<FaultGroup>(inner_->open(comm), armed_);
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::vector<Armed> armed_;  // this rank's faults, shared by every group and op
};

}  // namespace

std::unique_ptr<Backend> with_faults(std::unique_ptr<Backend> inner, std::vector<Fault> faults, int world_rank) {
  std::vector<Armed> armed;
  for (auto& f : faults)
    if (f.rank == world_rank) armed.push_back({std::move(f), 0});
  return std::make_unique<FaultBackend>(std::move(inner), std::move(armed));
}

}  // namespace fb::fault
