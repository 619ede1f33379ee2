#include <fmt/format.h>

#include "fabricbench/backends/backend.hpp"
#include "gpu_backends.hpp"
#include "mpi_host/mpi_host.hpp"

namespace fb {

// One entry per backend, like a testcase registry: a name, a line for
// --help, why it is absent on this machine (empty when usable), a factory.
const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = [] {
    std::vector<BackendInfo> r;
    r.push_back({"mpi", "MPI collectives and point-to-point on host memory", [] { return std::string(); },
                 make_mpi_host_backend});
    // GPU backends are always listed; without CUDA, a driver or a device they say why.
    r.push_back(nccl_backend_info());
    r.push_back(cuda_copy_backend_info());
    r.push_back(mpi_cuda_backend_info());
    return r;
  }();
  return registry;
}

const BackendInfo* find_backend(std::string_view name) {
  for (const auto& b : backend_registry())
    if (b.name == name) return &b;
  return nullptr;
}

std::string backend_names() {
  std::string out;
  for (const auto& b : backend_registry()) out += (out.empty() ? "" : ", ") + b.name;
  return out;
}

}  // namespace fb
