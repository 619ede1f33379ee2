#include "fabricbench/model/gemm_shapes.hpp"

#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"

namespace fb::model {

std::vector<GemmShape> layer_gemm_shapes(const Workload& w) {
  if (!w.transformer())
    throw UsageError(
        fmt::format("workload '{}' is given by its forward FLOPs per sample: it has no matrix shapes; "
                    "measure square products with `fabricbench gemm --size N`",
                    w.name));
  if (w.tp < 1 || w.hidden % w.tp != 0)
    throw UsageError(fmt::format("workload '{}': hidden {} is not divisible by tp {}", w.name, w.hidden, w.tp));
  const long long tokens = static_cast<long long>(w.micro_batch) * w.seq_len;
  const long long h = w.hidden;
  const long long ffn = 4 * h;  // the model's 24 h^2 FLOPs per token assume a 4h MLP
  // Forward Y (tokens x n) = X (tokens x k) W (k x n); Megatron splits QKV and
  // MLP up by columns (n / tp), attention out and MLP down by rows (k / tp).
  struct Forward {
    const char* name;
    long long n, k;
  };
  const Forward forward[] = {
      {"qkv", 3 * h / w.tp, h}, {"attn_out", h, h / w.tp}, {"mlp_up", ffn / w.tp, h}, {"mlp_down", h, ffn / w.tp}};
  std::vector<GemmShape> out;
  for (const auto& f : forward) {
    out.push_back({f.name, tokens, f.n, f.k});
    // dX (tokens x k) = dY (tokens x n) W^T; dW (k x n) = X^T (k x tokens) dY.
    out.push_back({fmt::format("{} dgrad", f.name), tokens, f.k, f.n});
    out.push_back({fmt::format("{} wgrad", f.name), f.k, f.n, tokens});
  }
  return out;
}

std::string oversized_gemm(const GemmShape& s) {
  constexpr long long kMaxSide = 65536;
  if (s.m <= kMaxSide && s.n <= kMaxSide && s.k <= kMaxSide) return "";
  return fmt::format("the {} product is {}x{}x{}: at most {} a side", s.name, s.m, s.n, s.k, kMaxSide);
}

}  // namespace fb::model
