// A participant's engine thread on a CPU of its own while it is timed.
//
// Launched unbound (mpirun --bind-to none, the README's line), two ranks of
// one machine may end up time-sharing a core: once one sleeps in a quiet
// control wait, the kernel's load balancer is free to move either rank, and
// with every core busy (other jobs) nothing moves them apart again; each
// message then waits for the scheduler's time slice (milliseconds). Holding
// each rank on a distinct CPU of its allowed set for the timed loop, and
// giving the set back after, rules that out; ranks bound by the launcher to
// one CPU each, or more ranks than CPUs, are left as they are.
#pragma once

#include <sched.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/comm.hpp"

namespace fb {

// This rank's place among the world's ranks that share its machine: the same
// kernel boot (boot_id), so emulated nodes in network namespaces, which share
// one host's CPUs, count as one machine. count 0 = unknown: never pin.
// With `near` (the CPUs next to the rank's device: its GPU's NUMA node), the
// slot counts only the ranks of the machine with the same near CPUs, and
// takes one of them: a GPU of the far socket no longer has its rank timed on
// CPU 0 (issue 34, defect 5).
struct CpuSlot {
  int index = 0;
  int count = 0;
  std::vector<int> near;  // ascending; empty: any allowed CPU
};

// Collective over `world`. `near`: this rank's near CPUs (Backend::near_cpus).
CpuSlot cpu_slot(const Comm& world, std::vector<int> near = {});
// Pure: slot `index` of `ids` (one machine id per world rank).
CpuSlot cpu_slot_of(std::span<const std::string> ids, int rank);

// Pure: the CPU that `slot` takes from `allowed` (the thread's allowed CPUs,
// ascending), or -1 when it should stay as it is: fewer allowed CPUs than
// ranks on the machine (of its near CPUs, with `near`), already bound to a
// single CPU, or alone on the machine (nothing of ours to share a core with
// but its own helper threads).
int cpu_for_slot(std::span<const int> allowed, const CpuSlot& slot);

// Pure: "0-55,112-167" as CPU numbers, ascending; empty for text that is not a CPU list.
std::vector<int> parse_cpu_list(std::string_view text);

// Pins the calling thread to cpu_for_slot(its allowed CPUs, slot) for its
// lifetime and restores the allowed set after. Does nothing where the slot
// gives no CPU or the system refuses.
class PinnedCpu {
 public:
  explicit PinnedCpu(const CpuSlot& slot);
  ~PinnedCpu();
  PinnedCpu(const PinnedCpu&) = delete;
  PinnedCpu& operator=(const PinnedCpu&) = delete;
  int cpu() const { return cpu_; }  // -1 = not pinned

 private:
  cpu_set_t saved_{};
  int cpu_ = -1;
};

}  // namespace fb
