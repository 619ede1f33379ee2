#include "fabricbench/core/host_check.hpp"

#include <cstring>
#include <type_traits>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pattern.hpp"

namespace fb {
namespace {

using check::expected_value;
using check::input_value;

template <typename T>
void fill_typed(const CheckContext& ctx, void* in, void* out) {
  std::memset(out, pattern::kPoisonByte, ctx.layout.out_elems * sizeof(T));
  if (!check::has_input(ctx)) return;
  T* p = static_cast<T*>(in);
  for (std::uint64_t i = 0; i < ctx.layout.in_elems; ++i) p[i] = input_value<T>(ctx, ctx.rank, i);
}

template <typename T>
CheckResult verify_typed(const CheckContext& ctx, const void* out) {
  CheckResult r;
  const T* p = static_cast<const T*>(out);
  for (std::uint64_t j = 0; j < ctx.layout.out_elems; ++j) {
    // Exact comparison, floats too: the patterns are small integers.
    if (p[j] != expected_value<T>(ctx, j)) {
      if (r.wrong == 0) r.first_wrong_index = j;
      ++r.wrong;
    }
  }
  return r;
}

template <typename F>
auto dispatch(Dtype dtype, F&& f) {
  return visit_dtype<HostNarrow>(dtype, [&](auto tag) -> decltype(f(float{})) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, NoType>) {
      throw UsageError("datatype " + std::string(name(dtype)) + " has no host check; use a host datatype");
    } else {
      return f(T{});
    }
  });
}

}  // namespace

bool host_checkable(Dtype dtype) {
  return visit_dtype<HostNarrow>(dtype, [](auto tag) { return !std::is_same_v<typename decltype(tag)::type, NoType>; });
}

bool has_checked_output(const CheckContext& ctx) { return check::has_output(ctx); }

void fill_for_check(const CheckContext& ctx, void* in, void* out) {
  dispatch(ctx.dtype, [&](auto tag) { fill_typed<decltype(tag)>(ctx, in, out); });
}

CheckResult verify_output(const CheckContext& ctx, const void* out) {
  if (!has_checked_output(ctx)) return {};
  return dispatch(ctx.dtype, [&](auto tag) { return verify_typed<decltype(tag)>(ctx, out); });
}

}  // namespace fb
