// The cuBLAS and cuBLASLt loader (src/backends/gemm/cublas_loaded.hpp) finds
// every call the GEMM code makes in the toolkit's libraries. They load
// without a GPU or a driver, so this runs in CI (label unit): a symbol
// misspelt, or a call added to a table and never looked up, fails here
// instead of on the first GPU that runs an fp8 product.
#include <gtest/gtest.h>

#include "gemm/cublas_loaded.hpp"

namespace fb::gpu {
namespace {

TEST(CublasLoaded, EveryCallTheGemmCodeMakesIsFound) {
  const CublasCalls& c = cublas();  // RunError naming the library or the symbol when one is missing
  EXPECT_NE(c.create, nullptr);
  EXPECT_NE(c.destroy, nullptr);
  EXPECT_NE(c.set_stream, nullptr);
  EXPECT_NE(c.gemm_ex, nullptr);
  EXPECT_NE(c.status_name, nullptr);
  EXPECT_NE(c.status_string, nullptr);
  EXPECT_STREQ(c.status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
}

TEST(CublasLoaded, EveryCuBlasLtCallTheFp8ProductsMakeIsFound) {
  const CublasLtCalls& c = cublas_lt();
  EXPECT_NE(c.create, nullptr);
  EXPECT_NE(c.destroy, nullptr);
  EXPECT_NE(c.desc_create, nullptr);
  EXPECT_NE(c.desc_destroy, nullptr);
  EXPECT_NE(c.desc_set, nullptr);
  EXPECT_NE(c.layout_create, nullptr);
  EXPECT_NE(c.layout_destroy, nullptr);
  EXPECT_NE(c.preference_create, nullptr);
  EXPECT_NE(c.preference_destroy, nullptr);
  EXPECT_NE(c.preference_set, nullptr);
  EXPECT_NE(c.heuristic, nullptr);
  EXPECT_NE(c.matmul, nullptr);
}

}  // namespace
}  // namespace fb::gpu
