// A backend that delegates every op to another backend and runs test hooks
// around each iteration: before (outside the timed span, e.g. arrive late)
// and after (e.g. corrupt the output).
#pragma once

#include <functional>
#include <memory>

#include "fabricbench/backends/decorator.hpp"

namespace fb::test {

struct Hooks {
  std::function<void()> before = [] {};
  std::function<void(PreparedOp&)> after = [](PreparedOp&) {};
};

class HookedBackend final : public ForwardingBackend {
 public:
  HookedBackend(std::unique_ptr<Backend> inner, Hooks hooks) : ForwardingBackend(std::move(inner)), hooks_(std::move(hooks)) {}
  std::unique_ptr<BackendGroup> open(const Comm& comm) override;

 private:
  Hooks hooks_;
};

}  // namespace fb::test
