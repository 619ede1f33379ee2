// The fault-injecting decorator around any backend.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "fabricbench/backends/corruptible.hpp"
#include "fabricbench/backends/decorator.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/backends/fault.hpp"

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

class FaultOp final : public IterationHooks {
 public:
  FaultOp(std::unique_ptr<PreparedOp> inner, std::vector<Armed*> armed, std::uint64_t out_elems)
      : IterationHooks(std::move(inner)), armed_(std::move(armed)), out_elems_(out_elems), output_(corruptible(this->inner())) {}

 private:
  // Before an iteration is issued: the faults that stop a rank strike here,
  // so a hung rank is one that never issued the iteration its peers are in.
  void before() override {
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

  void after(double iteration_us) override {
    last_us_ = iteration_us;
    for (Armed* a : armed_)
      if (a->fault.kind == Kind::corrupt && a->hits > a->fault.after)
        // At most every element once: a count beyond the buffer would loop
        // for as long as the count without changing anything more.
        for (std::uint64_t i = 0; i < std::min(a->fault.count, out_elems_); ++i) output_->corrupt_output_element(i);
  }

  std::vector<Armed*> armed_;
  std::uint64_t out_elems_ = 0;
  // Found once: FaultGroup::prepare refuses a corrupt fault on an op without one.
  CorruptibleOutput* output_ = nullptr;
  double last_us_ = 0;
};

class FaultGroup final : public ForwardingGroup {
 public:
  FaultGroup(std::unique_ptr<BackendGroup> inner, std::vector<Armed>& armed)
      : ForwardingGroup(std::move(inner)), armed_(armed) {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    std::vector<Armed*> matching;
    for (Armed& a : armed_)
      if ((!a.fault.op || *a.fault.op == spec.op) && (!a.fault.bytes || *a.fault.bytes == spec.layout.bytes))
        matching.push_back(&a);
    auto op = ForwardingGroup::prepare(spec);
    if (matching.empty()) return op;  // untouched: no fault here
    for (const Armed* a : matching)
      if (a->fault.kind == Kind::corrupt && !corruptible(*op))
        throw UsageError(fmt::format("--inject {}: this backend's {} op cannot have its output corrupted",
                                     a->fault.text, name(spec.op)));
    return std::make_unique<FaultOp>(std::move(op), std::move(matching), spec.layout.out_elems);
  }

 private:
  std::vector<Armed>& armed_;
};

class FaultBackend final : public ForwardingBackend {
 public:
  FaultBackend(std::unique_ptr<Backend> inner, std::vector<Armed> armed)
      : ForwardingBackend(std::move(inner)), armed_(std::move(armed)) {}
  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    return std::make_unique<FaultGroup>(ForwardingBackend::open(comm), armed_);
  }

 private:
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
