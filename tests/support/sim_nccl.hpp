// The host double of the collective library (nccl/collectives.hpp), for
// tests only: NCCL's calls over MPI, on the host buffers of the device double
// (sim_devices.hpp), exactly, for every datatype NCCL has (half, bfloat16
// and fp8 through host twins of the GPU's rounding, host_narrow.hpp). Each
// communicator is an MPI communicator of its own (a dup of the world at
// init, MPI_Comm_split at a split), so its traffic never meets the engine's.
//
// - Work is queued on the device double's streams: it runs when the stream
//   reaches it (at once, or when a captured graph is replayed, so an extra
//   replay is extra work); a collective ends on every rank at the latest
//   rank's clock plus its cost (P2P inside a node, the network between).
// - Sends and receives in a group run together at ncclGroupEnd.
// - Each rank logs, once per communicator at its first operation, the
//   connections NCCL would make, in NCCL's INFO format, into the debug file
//   NcclDebugLog reads: P2P/CUMEM inside a simulated node, NET/Socket
//   between nodes, so a row's path label is derived end to end.
// - Faults on demand: initialisation or a split that never completes (the
//   communicator stays in progress until aborted), an asynchronous error
//   after a number of operations, a signal sent to the process in the middle
//   of a graph replay (the devices stalled there) or of a hung initialisation.
//   An abort says so on stderr, and whether the communicator's
//   initialisation was unfinished (a half-made communicator).
// - Keeps each collective that ran (`ran`), for tests of what a workload issued.
#pragma once

#include <atomic>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nccl/collectives.hpp"

namespace fb::test {

struct SimNcclFaults {
  bool hang_in_init = false;
  bool hang_in_split = false;
  int async_error_after_ops = -1;  // -1: never
  // `signal` (SIGTERM, as a scheduler sends at a time limit) sent to this
  // process when the first graph replay of a collective of `signal_in_replay_of`
  // bytes reaches it; the devices stall there (SimDevices::stall), so the
  // row is in flight, and stays so until its communicator is aborted,
  // whenever the process handles the signal. 0: never.
  int signal = 0;
  std::size_t signal_in_replay_of = 0;
  // With hang_in_init: `signal` sent to this process from the initialisation
  // instead, the communicator left half-made (every rank, as a scheduler
  // signals them all), so the signal lands while the backend opens.
  bool signal_in_init = false;
};

class SimNccl final : public nccl::Collectives {
 public:
  // Ranks [k*ranks_per_node, (k+1)*ranks_per_node) of the world form simulated node k.
  explicit SimNccl(int ranks_per_node, SimNcclFaults faults = {}, bool has_gather = true)
      : ranks_per_node_(ranks_per_node), faults_(faults), has_gather_(has_gather) {}

  std::string version() override { return "2.28.3+simulated"; }
  bool has_datatype(Dtype dtype) override;
  bool has_gather() override { return has_gather_; }
  std::string log_hint() override;

  std::string unique_id() override { return "fabricbench-sim-nccl"; }
  nccl::Status init_rank(nccl::CommHandle& comm, int nranks, const std::string& id, int rank) override;
  nccl::Status split(nccl::CommHandle parent, int color, int key, nccl::CommHandle& child) override;
  nccl::Status async_error(nccl::CommHandle comm) override;
  nccl::Status finalize(nccl::CommHandle) override { return nccl::Status::ok(); }
  void destroy(nccl::CommHandle comm) noexcept override;
  void abort(nccl::CommHandle comm) noexcept override;

  nccl::Status all_reduce(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status all_gather(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status reduce_scatter(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status broadcast(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status reduce(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status gather(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status scatter(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status send(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status recv(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) override;
  nccl::Status group_start() override;
  nccl::Status group_end() override;

  // For the tests; an abort also says so on stderr, for a test that reads a job's output.
  // A fault's hang has been entered on this rank (init or split answered "in progress" for good).
  bool hanging() const { return hanging_.load(); }
  int communicators_made = 0;  // by init_rank and split, each to end aborted or destroyed
  int communicators_aborted = 0;
  int communicators_destroyed = 0;
  // Each collective that ran on the simulated devices, in order (a capture
  // adds none, each replay its own): for tests that check what a workload issued.
  struct Ran {
    std::string call;              // "ncclAllReduce"
    std::size_t bytes = 0;         // as the cost model takes it: all_gather and reduce_scatter the whole buffer
    std::vector<int> world_ranks;  // of the communicator's ranks
  };
  std::vector<Ran> ran;

 private:
  struct Pending;
  nccl::Status queue_collective(const char* call, nccl::CommHandle comm, gpu::DeviceStream& stream,
                                std::size_t bytes, std::function<void(void* mpi_comm)> work);
  void run_collective(const char* call, nccl::CommHandle comm, gpu::DeviceStream& stream, std::size_t bytes,
                      const std::function<void(void*)>& work, double& clock_us);
  bool signal_due(gpu::DeviceStream& stream, std::size_t bytes);
  nccl::Status point_to_point(bool is_send, const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream);

  int ranks_per_node_;
  SimNcclFaults faults_;
  std::atomic<bool> hanging_{false};  // set on the engine's thread, read by a test's watchdog thread
  bool has_gather_;
  bool signal_sent_ = false;
  int group_depth_ = 0;
  std::vector<std::shared_ptr<Pending>> grouped_;
};

}  // namespace fb::test
