// The GEMM code (src/backends/gemm/) through the host doubles of the device
// layer and the matrix-product library (support/sim_devices.hpp,
// sim_blas.hpp): `fabricbench gemm`'s probe computes the product the shape
// asks for, in every datatype it offers (fp8 e4m3 in cuBLASLt's layout), and
// reports the rate the simulated GPU runs at; a datatype not offered, a shape
// that does not fit, and an fp8 product cuBLASLt has no kernel for are
// refused. Each rank runs these on its own devices. And the
// command itself, `fabricbench gemm --out`, through a gemm plugin over the
// doubles (sim_gemm_plugin.cpp) on two ranks: its record says `simulated`,
// a slow simulated GPU is named, and the model refuses the record as a
// measured GEMM curve, naming it (issue 38).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "gemm/device_tools.hpp"
#include "gemm/gemm_values.hpp"
#include "host_narrow.hpp"
#include "process.hpp"
#include "sim_blas.hpp"
#include "sim_devices.hpp"

namespace fb {
namespace {

using test::SimBlas;
using test::SimDevices;

// `v` as stored in `dtype`.
double rounded(Dtype dtype, float v) {
  if (dtype == Dtype::bfloat16) return static_cast<float>(test::HostBf16(v));
  if (dtype == Dtype::half) return static_cast<float>(test::HostHalf(v));
  if (dtype == Dtype::fp8_e4m3) return static_cast<float>(test::HostE4m3(v));
  return v;
}

// The type C is written in: the inputs', bfloat16 for fp8 inputs (as
// Transformer Engine's fp8 products write it).
Dtype c_type(Dtype dtype) { return dtype == Dtype::fp8_e4m3 ? Dtype::bfloat16 : dtype; }

// Half a unit in the last place of `dtype`, relative.
double half_ulp(Dtype dtype) {
  if (dtype == Dtype::bfloat16) return std::ldexp(1.0, -8);
  if (dtype == Dtype::half) return std::ldexp(1.0, -11);
  return std::ldexp(1.0, -24);
}

// C = A B from the inputs' definition alone (gemm_values.hpp, A of seed 1
// m x k and B of seed 2 k x n, column-major, as the runner fills them; an
// fp8 A is filled k x m, its transpose), summed in double: the product a
// correct call computes, whatever the library's loop order.
std::vector<double> reference(const GemmSpec& s) {
  std::vector<double> c(static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n));
  const bool a_transposed = s.dtype == Dtype::fp8_e4m3;
  for (int j = 0; j < s.n; ++j)
    for (int i = 0; i < s.m; ++i) {
      double sum = 0;
      for (int l = 0; l < s.k; ++l)
        sum += rounded(s.dtype,
                       gemm::input_value(static_cast<std::uint64_t>(a_transposed ? l + i * s.k : i + l * s.m), 1)) *
               rounded(s.dtype, gemm::input_value(static_cast<std::uint64_t>(l + j * s.k), 2));
      c[static_cast<std::size_t>(i + j * s.m)] = sum;
    }
  return c;
}

// A shape whose three sides differ: a transposed operand or a leading
// dimension of the wrong side reads other elements, or past the matrix. For
// fp8, m and k are multiples of 16, as cuBLASLt's fp8 kernels need.
GemmSpec small_spec(Dtype dtype) {
  GemmSpec s;
  s.dtype = dtype;
  const bool fp8 = dtype == Dtype::fp8_e4m3;
  s.m = fp8 ? 32 : 24;
  s.n = 20;
  s.k = fp8 ? 48 : 36;
  s.iters = 6;
  s.warmup = 2;
  return s;
}

class SimGemm : public ::testing::TestWithParam<Dtype> {};

TEST_P(SimGemm, TheProbesProductIsTheShapesProductAtTheSimulatedRate) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimBlas blas(devices);
  const gpu::DeviceTools tools(devices, blas);
  ASSERT_TRUE(tools.simulated());
  const GemmSpec spec = small_spec(GetParam());
  const GemmResult r = tools.run_gemm(spec, 2);

  // Every product queued, summed in fp32, and each computed the shape's C.
  EXPECT_EQ(blas.products_run, spec.warmup + spec.iters);
  ASSERT_FALSE(blas.queued.empty());
  EXPECT_EQ(blas.queued.back().accumulate, Dtype::float32);
  EXPECT_EQ(blas.queued.back().c_dtype, c_type(spec.dtype));
  const std::vector<double> want = reference(spec);
  ASSERT_EQ(blas.last_c.size(), want.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    // The stored result's rounding, and fp32 sums of k terms below one each.
    const double tolerance = half_ulp(c_type(spec.dtype)) * std::fabs(want[i]) + 1e-5;
    if (std::fabs(blas.last_c[i] - want[i]) > tolerance) {
      if (++wrong <= 3)
        ADD_FAILURE() << name(spec.dtype) << " C[" << i << "] = " << blas.last_c[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(wrong, 0u) << name(spec.dtype) << ": wrong elements of " << want.size();

  // The figure the probe reports is the double's: flop over its peak for the datatype.
  const double rate = devices.product_tflops(2, spec.dtype);
  EXPECT_NEAR(r.tflops, rate, 1e-9 * rate) << name(spec.dtype);
  EXPECT_EQ(r.time.iterations, static_cast<std::size_t>(spec.iters));
  EXPECT_DOUBLE_EQ(r.time.min_us, r.time.max_us);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SimGemm,
                         ::testing::Values(Dtype::bfloat16, Dtype::half, Dtype::float32, Dtype::fp8_e4m3),
                         [](const auto& info) { return std::string(name(info.param)); });

// A GPU twice as slow as its node's others reports half their rate: the
// slow-device factor reaches the products, as a throttled GPU's would.
TEST(SimGemmRate, ASlowGpuReportsItsSlowerRate) {
  test::SimNode node = test::hgx_node();
  node.gpus[5].slow = 2;
  SimDevices devices(node, {4, 5});
  SimBlas blas(devices);
  const gpu::DeviceTools tools(devices, blas);
  const GemmSpec spec = small_spec(Dtype::bfloat16);
  const double fast = tools.run_gemm(spec, 0).tflops;
  const double slow = tools.run_gemm(spec, 1).tflops;
  EXPECT_NEAR(fast, node.tensor_tflops, 1e-9 * fast);
  EXPECT_NEAR(slow, fast / 2, 1e-9 * fast);
}

// The policy above the layer: a datatype `gemm` does not offer, and
// matrices that do not fit the GPU (UsageError naming the shape).
TEST(SimGemmRate, ADatatypeNotOfferedAndAShapeThatDoesNotFitAreRefused) {
  SimDevices devices(test::hgx_node(), {0});
  SimBlas blas(devices);
  const gpu::DeviceTools tools(devices, blas);
  GemmSpec int8 = small_spec(Dtype::int8);
  try {
    tools.run_gemm(int8, 0);
    ADD_FAILURE() << "an int8 GEMM ran";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no int8 product here"), std::string::npos) << e.what();
  }
  GemmSpec big = small_spec(Dtype::float32);
  big.m = big.n = big.k = 4096;  // 3 x 64 MiB on a GPU of 64 MiB
  try {
    tools.run_gemm(big, 0);
    ADD_FAILURE() << "a GEMM larger than the GPU ran";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("GEMM 4096x4096x4096: ", 0), 0u) << what;
    EXPECT_NE(what.find("; use a smaller size"), std::string::npos) << what;
  }
  EXPECT_EQ(blas.products_run, 0);
  EXPECT_EQ(devices.device_bytes_in_use(0), 0u);
}

// fp8 products run where cuBLASLt has fp8 kernels for them: on compute
// capability 8.9 and newer (not an A100's 8.0), m and k multiples of 16; the
// runner says which before any product, and the fp8 product it queues is the
// layout those kernels take (A transposed, C in bfloat16).
TEST(SimGemmRate, AnFp8ProductRunsOnlyWhereCublasLtHasAKernelForIt) {
  test::SimNode ampere = test::hgx_node();
  ampere.cc_major = 8;
  ampere.cc_minor = 0;
  SimDevices a100(ampere, {0});
  SimBlas a100_blas(a100);
  try {
    gpu::DeviceTools(a100, a100_blas).run_gemm(small_spec(Dtype::fp8_e4m3), 0);
    ADD_FAILURE() << "an fp8 GEMM ran on compute capability 8.0";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(compute capability 8.0): fp8 products need 8.9 or newer"), std::string::npos)
        << e.what();
  }
  SimDevices devices(test::hgx_node(), {0});
  SimBlas blas(devices);
  const gpu::DeviceTools tools(devices, blas);
  GemmSpec odd = small_spec(Dtype::fp8_e4m3);
  odd.k = 40;
  try {
    tools.run_gemm(odd, 0);
    ADD_FAILURE() << "an fp8 GEMM with k 40 ran";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("GEMM 32x20x40 in f8e4m3: cuBLASLt's fp8 kernels need m and k multiples "
                                         "of 16"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(a100_blas.products_run + blas.products_run, 0);
  tools.run_gemm(small_spec(Dtype::fp8_e4m3), 0);
  ASSERT_FALSE(blas.queued.empty());
  const gpu::MatrixProduct& p = blas.queued.back();
  EXPECT_TRUE(p.a_transposed);
  EXPECT_EQ(p.lda, 48);  // k: A stored k x m
  EXPECT_EQ(p.c_dtype, Dtype::bfloat16);
}

// A job of its own, not ranks of this one (without the launcher's
// environment), its gemm plugin the doubles'.
// The step's GPU compute (gemm_compute.cpp) through the doubles: the
// memory-bound work is SM copies on the products' stream, calibrated at the
// simulated copy rate, and each stretch queues the products and the copies
// it owes, the copies after the products.
TEST(SimGemmCompute, TheMemoryBoundWorkIsCopiesAtTheSimulatedCopyRate) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimBlas blas(devices);
  const gpu::DeviceTools tools(devices, blas);
  StepComputeSpec spec;
  spec.gemm = small_spec(Dtype::bfloat16);
  spec.copy_bytes = std::uint64_t{1} << 20;
  const std::uint64_t before = devices.device_bytes_in_use(3);
  const std::unique_ptr<GemmCompute> k = tools.make_gemm_compute(spec, 3);
  EXPECT_GE(devices.device_bytes_in_use(3) - before, 2 * spec.copy_bytes) << "two buffers of copy_bytes";
  // One copy moves copy_bytes at the double's SM-copy rate, after its launch cost.
  const double want_us =
      devices.costs().launch_us + static_cast<double>(spec.copy_bytes) / (devices.costs().sm_copy_gbps * 1e3);
  EXPECT_NEAR(k->copy_us(), want_us, 1e-6 * want_us);
  EXPECT_NE(k->describe().find("non-GEMM work as SM copies of 1 MiB"), std::string::npos) << k->describe();
  static const std::function<void()> idle = [] {};
  k->work(2 * k->product_us(), 5 * k->copy_us(), idle);
  EXPECT_EQ(k->products(), 2u);
  EXPECT_EQ(k->copies(), 5u);
  // compute() is products alone.
  k->compute(3 * k->product_us(), idle);
  EXPECT_EQ(k->products(), 5u);
  EXPECT_EQ(k->copies(), 5u);
}

test::ProcessResult fabricbench(const std::string& launch, const std::string& args) {
  return test::run_process(
      "timeout 120 env -i PATH=\"$PATH\" LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH\" OMPI_ALLOW_RUN_AS_ROOT=1 "
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FABRICBENCH_PLUGIN_DIR=" FB_SIM_PLUGIN_DIR " " +
      launch + " " + std::string(FB_BINARY) + " " + args + " </dev/null");
}

// Two ranks on GPUs 0 and 1 of a simulated node, GPU 1 planted twice as slow.
TEST(SimGemmCommand, ItsRecordSaysSimulatedNamesTheSlowGpuAndTheModelRefusesIt) {
  if (Comm::world().rank() != 0) GTEST_SKIP() << "rank 0 runs the command";
  const std::string dir = test::make_temp_dir("fb_sim_gemm_");
  const std::string record = dir + "/gemm.jsonl";
  const auto gemm = fabricbench("FABRICBENCH_SIM_SLOW_GPU=1:2 " + test::mpirun(2),
                                "gemm --shape 48x40x64 -d bf16,fp16,fp32,fp8_e4m3 -n 4 -w 1 --out " + record);
  ASSERT_EQ(gemm.exit_code, 0) << gemm.out << gemm.err;
  const Results r = read_results(record);
  EXPECT_EQ(r.header.command, "gemm");
  EXPECT_TRUE(r.header.simulated);
  // A line per rank and datatype, each at its simulated GPU's rate for the datatype.
  const test::SimNode node = test::hgx_node();
  ASSERT_EQ(r.gemms.size(), 8u) << gemm.out;
  for (const GemmLine& line : r.gemms) {
    const auto dtype = parse_dtype(line.dtype);
    ASSERT_TRUE(dtype) << line.dtype;
    ASSERT_TRUE(line.rank == 0 || line.rank == 1) << line.rank;
    const double peak = *dtype == Dtype::float32    ? node.fp32_tflops
                        : *dtype == Dtype::fp8_e4m3 ? node.fp8_tflops
                                                    : node.tensor_tflops;
    const double rate = line.rank == 1 ? peak / 2 : peak;
    EXPECT_NEAR(line.tflops, rate, 1e-6 * rate) << "rank " << line.rank << " " << line.dtype;
    EXPECT_EQ(line.m * line.n * line.k, 48 * 40 * 64) << line.dtype;
    EXPECT_EQ(line.pci_bus_id, node.gpus[static_cast<std::size_t>(line.rank)].bus_id) << line.dtype;
  }
  // The slow GPU named, for each datatype.
  const std::string said = gemm.out + gemm.err;
  for (const char* dtype : {"bfloat16", "half", "float", "f8e4m3"})
    EXPECT_NE(said.find(std::string("fabricbench gemm: ") + dtype + " slowest GPU: rank 1 (host "), std::string::npos)
        << dtype << ":\n"
        << said;
  EXPECT_NE(said.find(node.gpus[1].bus_id + ") 494.5 TFLOP/s, 50.0% below the fastest (989.0)"), std::string::npos)
      << said;
  // The model reads the record as a workload's GEMM curve, and refuses its figures, naming it.
  std::ofstream(dir + "/w.yaml") << "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}\n"
                                    "training: {global_batch: 16, micro_batch: 1}\n"
                                    "compute: {gemm_curve: gemm.jsonl, of_gemm: 0.5}\n"
                                    "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n";
  const auto model = fabricbench("", "model step -w " + dir + "/w.yaml");
  EXPECT_EQ(model.exit_code, 2) << model.out << model.err;
  EXPECT_NE(model.err.find("'" + record + "' was made through fabricbench's test doubles"), std::string::npos)
      << model.err;
  EXPECT_NE(model.err.find("figures are simulated, not measured"), std::string::npos) << model.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fb
