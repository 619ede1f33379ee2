#include "hooked_backend.hpp"

namespace fb::test {
namespace {

class HookedOp final : public PreparedOp {
 public:
  HookedOp(std::unique_ptr<PreparedOp> inner, const Hooks& hooks) : inner_(std::move(inner)), hooks_(hooks) {}
  void run() override {
    hooks_.before();
    inner_->run();
    hooks_.after(*inner_);
  }
  void run_timed(IterationTimes t) override {
    for (std::size_t i = 0; i < t.start_us.size(); ++i) {
      hooks_.before();
      t.start_us[i] = now_us();
      inner_->run();
      t.duration_us[i] = now_us() - t.start_us[i];
      hooks_.after(*inner_);
    }
  }
  void fill_check() override { inner_->fill_check(); }
  std::uint64_t count_wrong() override { return inner_->count_wrong(); }
  bool participates() const override { return inner_->participates(); }
  double ops_per_iteration() const override { return inner_->ops_per_iteration(); }
  void corrupt_output_element(std::uint64_t index) override { inner_->corrupt_output_element(index); }

 private:
  std::unique_ptr<PreparedOp> inner_;
  const Hooks& hooks_;
};

class HookedGroup final : public BackendGroup {
 public:
  HookedGroup(std::unique_ptr<BackendGroup> inner, const Hooks& hooks) : inner_(std::move(inner)), hooks_(hooks) {}
  void reserve(std::uint64_t in, std::uint64_t out) override { inner_->reserve(in, out); }
  Support allocate(const OpSpec& spec) override { return inner_->allocate(spec); }
  std::string path() const override { return inner_->path(); }
  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    return std::make_unique<HookedOp>(inner_->prepare(spec), hooks_);
  }

 private:
  std::unique_ptr<BackendGroup> inner_;
  const Hooks& hooks_;
};

}  // namespace

std::unique_ptr<BackendGroup> HookedBackend::open(const Comm& comm) {
  return std::make_unique<HookedGroup>(inner_->open(comm), hooks_);
}

}  // namespace fb::test
