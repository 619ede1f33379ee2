// A gemm plugin over the host doubles (support/sim_devices.hpp,
// sim_blas.hpp), for tests only: built into the test folder's own plugin
// folder, never installed, reached only by a test that points
// FABRICBENCH_PLUGIN_DIR there. So `fabricbench gemm` itself, flags to
// record, runs through the GEMM code on simulated GPUs (one 8-GPU HGX node,
// as this process's CUDA_VISIBLE_DEVICES shows it). A test plants a slow GPU
// with FABRICBENCH_SIM_SLOW_GPU=G:F (the node's GPU G runs F times slower),
// which only this plugin reads.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fabricbench/backends/plugin.hpp"
#include "gemm/device_tools.hpp"
#include "sim_blas.hpp"
#include "sim_devices.hpp"

namespace fb {
namespace {

test::SimNode fixture() {
  test::SimNode node = test::hgx_node();
  if (const char* slow = std::getenv("FABRICBENCH_SIM_SLOW_GPU")) {
    int gpu = -1;
    double factor = 1;
    if (std::sscanf(slow, "%d:%lf", &gpu, &factor) == 2 && gpu >= 0 && gpu < static_cast<int>(node.gpus.size()) &&
        factor > 0)
      node.gpus[static_cast<std::size_t>(gpu)].slow = factor;
  }
  return node;
}

const GpuTools* tools() {
  static const test::SimNode node = fixture();
  static test::SimDevices devices(node, test::cuda_visible(node));
  static test::SimBlas blas(devices);
  static const gpu::DeviceTools t(devices, blas);
  return &t;
}

std::vector<LibraryVersion> versions() { return {}; }

}  // namespace
}  // namespace fb

FB_DEFINE_PLUGIN_ABI()

const fb::PluginApi* fabricbench_plugin() {
  static const fb::PluginApi api{"gemm",
                                 "matrix products on simulated GPUs (fabricbench's test double)",
                                 "fabricbench's host doubles (tests only)",
                                 [] { return std::string(); },
                                 nullptr,
                                 fb::tools,
                                 fb::versions};
  return &api;
}
