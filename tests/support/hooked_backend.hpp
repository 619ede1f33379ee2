// A backend that delegates every op to another backend and runs test hooks
// around each iteration: before (outside the timed span, e.g. arrive late)
// and after (e.g. corrupt the output).
#pragma once

#include <functional>
#include <memory>

#include "fabricbench/backends/backend.hpp"

namespace fb::test {

struct Hooks {
  std::function<void()> before = [] {};
  std::function<void(PreparedOp&)> after = [](PreparedOp&) {};
};

class HookedBackend final : public Backend {
 public:
  HookedBackend(std::unique_ptr<Backend> inner, Hooks hooks) : inner_(std::move(inner)), hooks_(std::move(hooks)) {}
  std::string_view name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  Support supports(const OpSpec& s) const override { return inner_->supports(s); }
  Support fits(std::uint64_t bytes, int ranks) const override { return inner_->fits(bytes, ranks); }
  Support setup(const Comm& world, const RunOptions& options) override { return inner_->setup(world, options); }
  std::unique_ptr<BackendGroup> open(const Comm& comm) override;

 private:
  std::unique_ptr<Backend> inner_;
  Hooks hooks_;
};

}  // namespace fb::test
