#include "hooked_backend.hpp"

namespace fb::test {
namespace {

class HookedOp final : public IterationHooks {
 public:
  HookedOp(std::unique_ptr<PreparedOp> inner, const Hooks& hooks) : IterationHooks(std::move(inner)), hooks_(hooks) {}

 private:
  void before() override { hooks_.before(); }
  void after(double) override { hooks_.after(inner()); }
  const Hooks& hooks_;
};

class HookedGroup final : public ForwardingGroup {
 public:
  HookedGroup(std::unique_ptr<BackendGroup> inner, const Hooks& hooks) : ForwardingGroup(std::move(inner)), hooks_(hooks) {}
  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    return std::make_unique<HookedOp>(ForwardingGroup::prepare(spec), hooks_);
  }

 private:
  const Hooks& hooks_;
};

}  // namespace

std::unique_ptr<BackendGroup> HookedBackend::open(const Comm& comm) {
  return std::make_unique<HookedGroup>(ForwardingBackend::open(comm), hooks_);
}

}  // namespace fb::test
