// Fault injection reaches an op's output through CorruptibleOutput, under any
// decorators, and only where the op offers it.
#include "fabricbench/backends/corruptible.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fb {
namespace {

class PlainOp : public PreparedOp {
 public:
  void run() override {}
  void fill_check() override {}
  std::uint64_t count_wrong() override { return 0; }
};

class OpWithOutput final : public PlainOp, public CorruptibleOutput {
 public:
  void corrupt_output_element(std::uint64_t index) override { corrupted.push_back(index); }
  std::vector<std::uint64_t> corrupted;
};

class Wrapper final : public ForwardingOp {
 public:
  using ForwardingOp::ForwardingOp;
};

TEST(Corruptible, FoundUnderTwoDecorators) {
  auto inner = std::make_unique<OpWithOutput>();
  OpWithOutput* raw = inner.get();
  Wrapper outer(std::make_unique<Wrapper>(std::move(inner)));
  CorruptibleOutput* c = corruptible(outer);
  ASSERT_NE(c, nullptr);
  c->corrupt_output_element(5);
  EXPECT_EQ(raw->corrupted, std::vector<std::uint64_t>{5});
}

TEST(Corruptible, AnOpThatDoesNotOfferItIsNull) {
  PlainOp plain;
  EXPECT_EQ(corruptible(plain), nullptr);
  Wrapper wrapped(std::make_unique<PlainOp>());
  EXPECT_EQ(corruptible(wrapped), nullptr);
}

}  // namespace
}  // namespace fb
