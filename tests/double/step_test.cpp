// `fabricbench step --backend nccl` through the doubles: the step executor
// (step/executor.hpp) on the nccl backend's own code over the simulated
// devices and NCCL, with a simulated GEMM compute in place of the gemm
// plugin's cuBLAS products, as step_command.cpp wires them (set_up_backend,
// then the compute, then the executor), and the step line it records
// (cli/step_report.hpp) read back from a record. Two nodes of two GPUs
// (FABRICBENCH_RANKS_PER_NODE=2): tensor parallel inside a node, data
// parallel across the two.
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sinks.hpp"
#include "fabricbench/model/gemm_shapes.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/step/executor.hpp"
#include "gemm/device_tools.hpp"
#include "nccl/nccl_backend.hpp"
#include "process.hpp"
#include "sim_blas.hpp"
#include "sim_devices.hpp"
#include "sim_nccl.hpp"
#include "step_report.hpp"

namespace fb {
namespace {

double thread_cpu_us() {
  timespec t{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) throw std::runtime_error("clock_gettime failed");
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

// Not the gemm code's own compute over the GEMM double (gemm_test.cpp runs
// that): its products advance the double's virtual clock, while the step
// executor times a stretch of compute on the host's clock, so the step's
// figures would be the host's speed at the double's loops, not the
// compute the schedule planned.
//
// The gemm plugin's compute (GemmCompute) as a test double: work of the
// length asked for, in slices with the step's progress polled between them
// (the calls queued under the compute start and complete meanwhile). Timed
// on this thread's CPU clock, so a stretch is never shorter than asked
// however loaded the machine; it keeps what the executor asked for.
class SimGemmCompute final : public ComputeKernel {
 public:
  void compute(double us, const std::function<void()>& poll) override {
    asked_us += us;
    const double end = thread_cpu_us() + us;
    while (thread_cpu_us() < end) {
      const double slice_end = std::min(end, thread_cpu_us() + kSliceUs);
      while (thread_cpu_us() < slice_end) {
      }
      poll();
    }
  }
  std::string describe() const override { return "simulated GEMM products (fabricbench's test double)"; }
  double asked_us = 0;  // the compute asked for over the whole run

 private:
  static constexpr double kSliceUs = 50;
};

constexpr double kComputeUs = 2000;
constexpr int kSteps = 3;
constexpr int kWarmup = 1;
constexpr std::uint64_t kTpBytes = 64 << 10;
constexpr std::uint64_t kDpBytes = 256 << 10;

// tp 2 x dp 2: a TP all-reduce that blocks the compute, DP gradient
// all-reduces under the last half of it.
step::StepSchedule tp_dp_step() {
  step::StepSchedule s;
  s.tp = 2;
  s.dp = 2;
  s.compute_us = kComputeUs;
  s.comms.push_back({"TP activation all-reduce", Op::all_reduce, step::Group::tp, kTpBytes, 2, 0});
  s.comms.push_back({"DP gradient all-reduce", Op::all_reduce, step::Group::dp, kDpBytes, 3, 0.5});
  return s;
}

// Rank 0 writes the step's lines into a record as the step command does
// (job().sinks.record_line), and reads them back; the others get nothing.
Results recorded(const Comm& world, const std::vector<RecordLine>& lines, bool simulated) {
  Results res;
  if (world.rank() == 0) {
    const std::string path = test::make_temp_dir("fb_sim_step_") + "/step.jsonl";
    auto sink = make_record_sink(path, false, ClosingTotals::none);
    RunHeader header;
    header.command = "step";
    header.ranks = world.size();
    header.backend = "nccl";
    header.simulated = simulated;
    sink->begin(header);
    for (const RecordLine& line : lines) sink->record_line(line);
    sink->end(Summary{});
    res = read_results(path);
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  }
  return res;
}

// The communicator of each collective that ran: TP inside a node, DP across the two.
void expect_groups(const std::vector<test::SimNccl::Ran>& ran, const NodeMap& nodes) {
  int tp = 0, dp = 0;
  for (const auto& r : ran) {
    ASSERT_EQ(r.call, "ncclAllReduce");
    ASSERT_EQ(r.world_ranks.size(), 2u) << r.bytes;
    const bool one_node = nodes.rank_node[static_cast<std::size_t>(r.world_ranks[0])] ==
                          nodes.rank_node[static_cast<std::size_t>(r.world_ranks[1])];
    if (r.bytes == kTpBytes) {
      ++tp;
      EXPECT_TRUE(one_node) << "TP all-reduce over world ranks " << r.world_ranks[0] << ", " << r.world_ranks[1];
    } else {
      ++dp;
      EXPECT_EQ(r.bytes, kDpBytes);
      EXPECT_FALSE(one_node) << "DP all-reduce over world ranks " << r.world_ranks[0] << ", " << r.world_ranks[1];
    }
  }
  // Per step: the schedule's calls in the three modes that communicate,
  // over warm-up and timed steps, then each call alone once per timed step.
  EXPECT_EQ(tp, 2 * 3 * (kSteps + kWarmup) + kSteps);
  EXPECT_EQ(dp, 3 * 3 * (kSteps + kWarmup) + kSteps);
}

// The step line's products, read back from the record: each of the layer's
// twelve products at the slow GPU's simulated rate, named by rank, beside
// the model's rate for it from the H100's preset curve.
void expect_products(const StepLine& line, const model::Workload& w) {
  const std::vector<model::GemmShape> shapes = model::layer_gemm_shapes(w);
  const model::LayerPricing pricing = model::price_layer_shapes(w, model::builtin_presets());
  ASSERT_EQ(shapes.size(), 12u);
  ASSERT_EQ(line.products.size(), shapes.size());
  EXPECT_EQ(line.products_model_source, "preset_curve");
  EXPECT_NEAR(line.products_model_tflops, pricing.layer_tflops, 1e-9 * pricing.layer_tflops);
  const double slow_tflops = test::hgx_node().tensor_tflops / 2;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const StepProduct& p = line.products[i];
    EXPECT_EQ(p.name, shapes[i].name);
    EXPECT_EQ(std::tuple(p.m, p.n, p.k), std::tuple(shapes[i].m, shapes[i].n, shapes[i].k)) << p.name;
    EXPECT_EQ(p.slowest_rank, 1) << p.name;
    EXPECT_NEAR(p.measured_tflops, slow_tflops, 1e-6 * slow_tflops) << p.name;
    EXPECT_NEAR(p.measured_us, shapes[i].flops() / (slow_tflops * 1e12) * 1e6, 1e-6 * p.measured_us) << p.name;
    EXPECT_NEAR(p.model_tflops, pricing.shapes[i].tflops, 1e-9 * p.model_tflops) << p.name;
    EXPECT_GT(p.model_tflops, 0) << p.name;
  }
}

// The layer's products are timed in the workload's own datatype
// (cli::product_dtype), whatever --gemm-dtype the step's compute runs, so
// they stand beside the model's rates for that datatype: an fp8 workload's
// run as fp8 products, at the simulated GPU's fp8 rate. fp8 e5m2 has no
// product here, and the step says why.
TEST(SimStepProducts, TheLayersProductsAreTimedInTheWorkloadsDatatype) {
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  const auto workload_in = [](const std::string& dtype) {
    return model::parse_workload(
        "name: simulated tp2\n"
        "model: {params: 0.2M, layers: 2, hidden: 64, heads: 2, seq_len: 32}\n"
        "training: {global_batch: 8, micro_batch: 1, dtype: " +
        dtype +
        "}\n"
        "parallel: {tp: 2}\n"
        "compute: {gemm_curve: preset, of_gemm: 0.5}\n"
        "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 4}\n");
  };
  std::string why;
  EXPECT_EQ(cli::product_dtype(workload_in("fp16"), why), Dtype::half);
  EXPECT_EQ(cli::product_dtype(workload_in("bfloat16"), why), Dtype::bfloat16);
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_FALSE(cli::product_dtype(workload_in("fp8_e5m2"), why));
  EXPECT_NE(why.find("the workload's dtype fp8_e5m2 has no product of its own here"), std::string::npos) << why;
  why.clear();
  const model::Workload fp8 = workload_in("fp8_e4m3");
  const std::optional<Dtype> dtype = cli::product_dtype(fp8, why);
  ASSERT_EQ(dtype, Dtype::fp8_e4m3) << why;

  test::SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  test::SimBlas blas(devices);
  const gpu::DeviceTools tools(devices, blas);
  const cli::LayerProducts products = cli::measure_layer_products(
      world, tools, nodes.local_rank, model::layer_gemm_shapes(fp8), fp8, model::builtin_presets(), *dtype);
  EXPECT_EQ(products.dtype, Dtype::fp8_e4m3);
  ASSERT_EQ(products.products.size(), 12u);
  const double fp8_tflops = test::hgx_node().fp8_tflops;
  for (const cli::ProductFigure& p : products.products)
    EXPECT_NEAR(p.measured_tflops, fp8_tflops, 1e-6 * fp8_tflops) << p.shape.name;
  ASSERT_FALSE(blas.queued.empty());
  EXPECT_EQ(blas.queued.back().dtype, Dtype::fp8_e4m3);
  EXPECT_TRUE(blas.queued.back().a_transposed);
}

TEST(SimNccl, StepOnTwoNodesRecordsItsShareFromTheSimulatedCompute) {
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  if (nodes.nodes != 2 || nodes.local_size != 2)
    GTEST_SKIP() << "two nodes of two ranks (FABRICBENCH_RANKS_PER_NODE=2 with 4 ranks): TP inside a node, DP across";
  test::SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  test::SimNccl lib(nodes.local_size);
  auto backend = make_nccl_backend(devices, lib);
  set_up_backend(world, *backend, RunOptions{});  // placement, as step's make_compute does first
  SimGemmCompute compute;
  const step::StepSchedule schedule = tp_dp_step();
  step::StepReport report;
  {
    step::Executor executor(world, *backend, compute, schedule, Dtype::bfloat16);
    report = executor.run(kSteps, kWarmup);
  }
  // The compute asked for: the planned compute of every step that computes (three modes of four).
  EXPECT_DOUBLE_EQ(compute.asked_us, 3.0 * (kSteps + kWarmup) * kComputeUs);
  expect_groups(lib.ran, nodes);

  // The layer's products shape by shape (cli/step_products.hpp) through the
  // GEMM double, each rank on its node's GPU of its local index, GPU 1 of
  // each node twice as slow: ranks 1 and 3 tie, and the lowest is named.
  test::SimNode gemm_node = test::hgx_node();
  gemm_node.gpus[1].slow = 2;
  test::SimDevices gemm_devices(gemm_node, {0, 1, 2, 3, 4, 5, 6, 7});
  test::SimBlas blas(gemm_devices);
  const gpu::DeviceTools tools(gemm_devices, blas);
  const model::Workload workload = model::parse_workload(
      "name: simulated tp2 dp2\n"
      "model: {params: 0.2M, layers: 2, hidden: 64, heads: 2, seq_len: 32}\n"
      "training: {global_batch: 8, micro_batch: 1, dtype: bf16}\n"
      "parallel: {tp: 2}\n"
      "compute: {gemm_curve: preset, of_gemm: 0.5}\n"
      "cluster: {gpu: h100-sxm, nodes: 2, gpus_per_node: 2}\n");
  std::string why;
  const std::optional<Dtype> dtype = cli::product_dtype(workload, why);
  ASSERT_EQ(dtype, Dtype::bfloat16) << why;
  const cli::LayerProducts products = cli::measure_layer_products(
      world, tools, nodes.local_rank, model::layer_gemm_shapes(workload), workload, model::builtin_presets(), *dtype);
  const cli::StepView view{workload, schedule, report, compute.describe(), "nccl", {}, &products};
  const Results res = recorded(world, cli::step_lines(view), backend->simulated());
  if (world.rank() != 0) return;
  EXPECT_TRUE(res.header.simulated);
  ASSERT_EQ(res.steps.size(), 1u);
  const StepLine& line = res.steps[0];
  EXPECT_EQ(line.backend, "nccl");
  EXPECT_EQ(line.products_dtype, "bfloat16");
  EXPECT_EQ(line.kernel, compute.describe());
  EXPECT_EQ(line.tp, 2);
  EXPECT_EQ(line.dp, 2);
  EXPECT_EQ(line.planned_compute_us, kComputeUs);
  ASSERT_EQ(line.modes.size(), 4u);
  const auto median = [&](const char* mode) {
    const auto it = std::find_if(line.modes.begin(), line.modes.end(), [&](const auto& m) { return m.mode == mode; });
    EXPECT_NE(it, line.modes.end()) << mode;
    return it == line.modes.end() ? 0.0 : it->time_median_us;
  };
  for (const auto& m : line.modes) EXPECT_EQ(m.iterations, static_cast<std::size_t>(kSteps)) << m.mode;
  // The compute's figure is the simulated compute's: never less than planned (its own thread's CPU time).
  const double compute_us = median("compute_only");
  const double comm_us = median("comm_only");
  EXPECT_GE(compute_us, kComputeUs);
  EXPECT_GT(comm_us, 0);
  EXPECT_GE(median("serial"), kComputeUs);
  EXPECT_GE(median("overlapped"), kComputeUs);
  // The shares, between 0 and 1, and from the figures beside them.
  EXPECT_GT(line.comm_share, 0);
  EXPECT_LT(line.comm_share, 1);
  EXPECT_NEAR(line.comm_share, comm_us / (compute_us + comm_us), 1e-9);
  EXPECT_GE(line.exposed_share, 0);
  EXPECT_LT(line.exposed_share, 1);
  EXPECT_NEAR(line.efficiency, compute_us / median("overlapped"), 1e-9);
  // The step's collectives, as scheduled, each timed.
  ASSERT_EQ(line.comms.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& c = line.comms[i];
    EXPECT_EQ(c.name, schedule.comms[i].name);
    EXPECT_EQ(c.op, "all_reduce");
    EXPECT_EQ(c.bytes, schedule.comms[i].bytes);
    EXPECT_EQ(c.calls, schedule.comms[i].calls);
    EXPECT_GT(c.per_call_us, 0) << c.name;
    EXPECT_NEAR(c.per_step_us, c.per_call_us * c.calls, 1e-6 * c.per_step_us) << c.name;
  }
  EXPECT_EQ(line.comms[0].group, "tp");
  EXPECT_EQ(line.comms[1].group, "dp");
  expect_products(line, workload);
}

}  // namespace
}  // namespace fb
