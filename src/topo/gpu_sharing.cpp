// Whether a GPU is the job's alone. A GPU rented through a container
// platform is shared unless the pod requested it (nvidia.com/gpu): another
// process's kernels and copies then take SMs, memory bandwidth and PCIe or
// NVLink time from the ranks, and the figures measure a share. NVML lists
// the processes with a context on the GPU, its compute mode (whether others
// may open one) and its MIG mode (whether it is split into instances).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/core/inventory_gpus.hpp"
#include "fabricbench/topo/inventory.hpp"

namespace fb::topo {
namespace {

constexpr std::array kComputeModeNames = {
    std::pair{ComputeMode::shared, "default"},
    std::pair{ComputeMode::exclusive_thread, "exclusive_thread"},
    std::pair{ComputeMode::prohibited, "prohibited"},
    std::pair{ComputeMode::exclusive_process, "exclusive_process"},
};
static_assert(enum_cover::covers<ComputeMode, kComputeModeNames>([](const auto& e) { return e.first; }),
              "kComputeModeNames names every ComputeMode, in order");

GpuUser user_of(const Sysfs& sysfs, const GpuProcess& p, const std::vector<long>& job_pids) {
  GpuUser u;
  u.pid = p.pid;
  u.used_memory_bytes = p.used_memory_bytes;
  u.ours = std::find(job_pids.begin(), job_pids.end(), static_cast<long>(p.pid)) != job_pids.end();
  const auto comm = sysfs.read(fmt::format("proc/{}/comm", p.pid));
  u.name = comm ? comm
                : Fact<std::string>::unknown(
                      fmt::format("pid {} is not in this node's /proc: a process of another container or of the host "
                                  "(drivers before R560 report the host's pids)",
                                  p.pid));
  return u;
}

std::string user_text(const GpuUser& u) {
  return gpu_user_text(u.pid, u.name ? *u.name : std::string(),
                       u.used_memory_bytes ? std::optional(*u.used_memory_bytes) : std::nullopt);
}

}  // namespace

const char* compute_mode_name(ComputeMode mode) { return kComputeModeNames[static_cast<std::size_t>(mode)].second; }

GpuSharing read_gpu_sharing(const Sysfs& sysfs, Nvml& nvml, unsigned gpu, const std::vector<long>& job_pids) {
  GpuSharing s;
  const auto processes = nvml.compute_processes(gpu);
  if (processes) {
    std::vector<GpuUser> users;
    for (const auto& p : *processes) users.push_back(user_of(sysfs, p, job_pids));
    s.users = std::move(users);
  } else {
    s.users = Fact<std::vector<GpuUser>>::unknown(processes.why());
  }
  s.compute_mode = nvml.compute_mode(gpu);
  s.mig = nvml.mig_enabled(gpu);
  return s;
}

std::vector<std::string> sharing_flags(const GpuSharing& sharing) {
  std::vector<std::string> flags;
  if (sharing.users) {
    std::vector<std::string> others;
    for (const auto& u : *sharing.users)
      if (!u.ours) others.push_back(user_text(u));
    if (!others.empty())
      flags.push_back(fmt::format("in use by {} other process{}: {}; figures measured on it are a share of it",
                                  others.size(), others.size() == 1 ? "" : "es", fmt::join(others, ", ")));
  }
  if (sharing.mig && *sharing.mig)
    flags.push_back(
        "MIG mode on: a rank gets one GPU instance's share of SMs and memory, and MIG instances have no "
        "peer-to-peer over NVLink or PCIe");
  if (sharing.compute_mode && *sharing.compute_mode == ComputeMode::prohibited)
    flags.push_back("compute mode prohibited: no process may open a CUDA context on it (nvidia-smi -c DEFAULT)");
  return flags;
}

}  // namespace fb::topo
