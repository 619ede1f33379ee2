#include "sim_nccl.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include "fabricbench/core/check_values.hpp"
#include "host_narrow.hpp"
#include "mpi_host/mpi_types.hpp"
#include "fabricbench/core/comm.hpp"
#include "nccl/nccl_debug.hpp"
#include "sim_devices.hpp"

namespace fb::test {
namespace {

using nccl::Status;
using State = nccl::Status::State;

// Link rates of the collective cost model (GB/s): NVLink inside a node, a
// 100 GbE socket between nodes.
constexpr double kIntraGbps = 370;
constexpr double kInterGbps = 12.5;

struct SimComm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0;
  int nranks = 1;
  std::vector<int> world_ranks;  // of each rank of this communicator
  Status state;
  int ops = 0;
  bool initialising = false;  // its initialisation hangs (hang_in_init): half-made until aborted
  bool ring_logged = false;
  std::set<int> peers_logged;
};

SimComm* sim(nccl::CommHandle comm) { return static_cast<SimComm*>(comm); }

Status failed(std::string what) { return {State::failed, std::move(what)}; }

void check_mpi_call(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("SimNccl: {} failed ({})", call, rc));
}

SimComm* adopt(MPI_Comm mpi) {
  auto* c = new SimComm;
  c->mpi = mpi;
  MPI_Comm_rank(mpi, &c->rank);
  MPI_Comm_size(mpi, &c->nranks);
  c->world_ranks.resize(static_cast<std::size_t>(c->nranks));
  int me = Comm::world().rank();
  check_mpi_call(MPI_Allgather(&me, 1, MPI_INT, c->world_ranks.data(), 1, MPI_INT, mpi), "MPI_Allgather");
  return c;
}

// MPI carries the narrow floats as their bits (reduced by narrow_op); the
// others as the mpi backend does.
MPI_Datatype mpi_type(Dtype dtype) {
  if (const MPI_Datatype wide = mpi::datatype(dtype); wide != MPI_DATATYPE_NULL) return wide;
  return dtype_bytes(dtype) == 2 ? MPI_UINT16_T : MPI_UINT8_T;
}

// avg reduces as a sum, divided afterwards as NCCL does (check::average).
RedOp combined(RedOp redop) { return redop == RedOp::avg ? RedOp::sum : redop; }

// A narrow float's reduction: each pair widened to float, combined, rounded back.
template <typename S, RedOp R>
void narrow_op(void* in, void* inout, int* len, MPI_Datatype*) {
  const S* a = static_cast<const S*>(in);
  S* b = static_cast<S*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = S(check::combine<float>(R, static_cast<float>(a[i]), static_cast<float>(b[i])));
}

template <typename S>
MPI_Op make_narrow_op(RedOp redop) {
  MPI_User_function* fn = nullptr;
  switch (combined(redop)) {
    case RedOp::sum:
      fn = narrow_op<S, RedOp::sum>;
      break;
    case RedOp::prod:
      fn = narrow_op<S, RedOp::prod>;
      break;
    case RedOp::max:
      fn = narrow_op<S, RedOp::max>;
      break;
    case RedOp::min:
      fn = narrow_op<S, RedOp::min>;
      break;
    case RedOp::avg:
      break;  // combined() made it a sum
  }
  MPI_Op op = MPI_OP_NULL;
  check_mpi_call(MPI_Op_create(fn, 1, &op), "MPI_Op_create");
  return op;
}

MPI_Op mpi_op(Dtype dtype, RedOp redop) {
  const MPI_Op builtin = mpi::reduction(combined(redop));
  // One user op per narrow datatype and operator, made once (MPI_Finalize frees them).
  static std::map<std::pair<Dtype, RedOp>, MPI_Op> made;
  return visit_dtype<SimNarrow>(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<typename HostCompute<S>::type, S>) {
      return builtin;
    } else {
      auto [it, fresh] = made.try_emplace({dtype, combined(redop)}, MPI_OP_NULL);
      if (fresh) it->second = make_narrow_op<S>(redop);
      return it->second;
    }
  });
}

// avg's division, on `count` elements of the result.
void divide_for_avg(const nccl::Collectives::Call& c, void* out, std::size_t count, int nranks) {
  if (c.redop != RedOp::avg) return;
  visit_dtype<SimNarrow>(c.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename HostCompute<S>::type;
    S* p = static_cast<S*>(out);
    for (std::size_t i = 0; i < count; ++i) p[i] = static_cast<S>(check::average<C>(static_cast<C>(p[i]), nranks));
  });
}

// NCCL's in-place forms alias input and output; MPI's do not: an input that
// overlaps the output is read from a copy.
const void* unaliased(const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes,
                      std::vector<std::byte>& copy) {
  const auto* a = static_cast<const std::byte*>(in);
  const auto* b = static_cast<const std::byte*>(out);
  if (!in || !out || a + in_bytes <= b || b + out_bytes <= a) return in;
  copy.assign(a, a + in_bytes);
  return copy.data();
}

// One line of NCCL's INFO log, as this process would write it.
std::string info_line(const std::string& message) {
  return fmt::format("{}:{}:{} [0] NCCL INFO {}\n", host_name(), ::getpid(), ::getpid(), message);
}

}  // namespace

struct SimNccl::Pending {
  bool is_send;
  Call call;
  SimComm* comm;
  gpu::DeviceStream* stream;
};

bool SimNccl::has_datatype(Dtype dtype) { return mpi_type(dtype) != MPI_DATATYPE_NULL; }

std::string SimNccl::log_hint() { return NcclDebugLog::get().path(); }

Status SimNccl::init_rank(nccl::CommHandle& comm, int nranks, const std::string& id, int rank) {
  if (id != unique_id()) return failed("ncclInvalidArgument (the unique id is not one ncclGetUniqueId made)");
  MPI_Comm dup = MPI_COMM_NULL;
  check_mpi_call(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
  SimComm* c = adopt(dup);
  ++communicators_made;
  comm = c;
  if (c->nranks != nranks || c->rank != rank)
    return failed(fmt::format("ncclInvalidArgument (rank {} of {} on a world of {})", rank, nranks, c->nranks));
  if (!faults_.hang_in_init) return c->state;
  c->state = {State::in_progress, ""};
  c->initialising = true;
  hanging_.store(true);
  if (faults_.signal != 0 && faults_.signal_in_init) {
    // Every rank's communicator half made before any rank is signalled, as a
    // scheduler's signal finds them all in the hung initialisation: without
    // it, a rank still in MPI_Comm_dup when the run ended had nothing to abort.
    check_mpi_call(MPI_Barrier(dup), "MPI_Barrier (all in the initialisation)");
    if (::kill(::getpid(), faults_.signal) != 0) throw std::runtime_error("SimNccl: kill(getpid()) failed");
    // The call returns late, as on a loaded machine: rank 0's stop reaches
    // every rank while its engine thread is still inside the call, before the
    // backend holds the communicator it is making. That must still be aborted.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return c->state;
}

Status SimNccl::split(nccl::CommHandle parent, int color, int key, nccl::CommHandle& child) {
  SimComm* p = sim(parent);
  if (p->state.state != State::ok) return failed("ncclInvalidUsage (a split of a communicator not ready)");
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi_call(MPI_Comm_split(p->mpi, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  if (color >= 0) {
    child = adopt(out);
    ++communicators_made;
  }
  if (faults_.hang_in_split) {
    p->state = {State::in_progress, ""};  // the parent carries the split's progress, which never ends
    hanging_.store(true);
    return p->state;
  }
  return Status::ok();
}

Status SimNccl::async_error(nccl::CommHandle comm) {
  SimComm* c = sim(comm);
  if (faults_.async_error_after_ops >= 0 && c->ops > faults_.async_error_after_ops)
    return failed(fmt::format("ncclRemoteError (simulated: a peer of rank {} failed after {} operations)", c->rank,
                              faults_.async_error_after_ops));
  return c->state;
}

void SimNccl::destroy(nccl::CommHandle comm) noexcept {
  SimComm* c = sim(comm);
  MPI_Comm_free(&c->mpi);
  delete c;
  ++communicators_destroyed;
}

void SimNccl::abort(nccl::CommHandle comm) noexcept {
  SimComm* c = sim(comm);
  std::fprintf(stderr, "SimNccl: rank %d aborted a communicator of %d ranks%s (ncclCommAbort)\n", Comm::world().rank(),
               c->nranks, c->initialising ? ", its initialisation unfinished" : "");
  MPI_Comm_free(&c->mpi);
  delete c;
  ++communicators_aborted;
}

// The fault's moment: the first replay of a collective of the size asked for.
bool SimNccl::signal_due(gpu::DeviceStream& stream, std::size_t bytes) {
  if (faults_.signal == 0 || signal_sent_ || bytes != faults_.signal_in_replay_of || !sim_replaying(stream))
    return false;
  signal_sent_ = true;
  return true;
}

// A collective's work, when the device reaches it (at once, or in a replay).
void SimNccl::run_collective(const char* call, nccl::CommHandle comm, gpu::DeviceStream& stream, std::size_t bytes,
                             const std::function<void(void*)>& work, double& clock_us) {
  SimComm* s = sim(comm);
  if (signal_due(stream, bytes)) {
    // Every rank of the job gets here at the same replay: each is sent the signal, as a scheduler signals them all.
    sim_stall(stream);
    if (::kill(::getpid(), faults_.signal) != 0) throw std::runtime_error("SimNccl: kill(getpid()) failed");
    return;
  }
  // A collective ends after its last rank arrived: every rank's clock moves to the latest.
  double latest = clock_us;
  check_mpi_call(MPI_Allreduce(MPI_IN_PLACE, &latest, 1, MPI_DOUBLE, MPI_MAX, s->mpi), "MPI_Allreduce (clock)");
  clock_us = latest;
  work(&s->mpi);
  ran.push_back({call, bytes, s->world_ranks});
}

Status SimNccl::queue_collective(const char* call, nccl::CommHandle comm, gpu::DeviceStream& stream,
                                 std::size_t bytes, std::function<void(void*)> work) {
  SimComm* s = sim(comm);
  if (s->state.state != State::ok)
    return failed(fmt::format("ncclInvalidUsage ({} on a communicator not ready)", call));
  if (group_depth_ > 0)
    return failed(fmt::format("ncclInvalidUsage (the double groups sends and receives only: {})", call));
  if (!s->ring_logged) {
    // NCCL connects a communicator's ring at its first collective and says how, rank by rank.
    s->ring_logged = true;
    std::ofstream log(NcclDebugLog::get().path(), std::ios::app);
    const int next = (s->rank + 1) % s->nranks;
    const int prev = (s->rank - 1 + s->nranks) % s->nranks;
    const auto node = [&](int r) { return s->world_ranks[static_cast<std::size_t>(r)] / ranks_per_node_; };
    const auto dev = [&](int r) { return s->world_ranks[static_cast<std::size_t>(r)] % ranks_per_node_; };
    if (s->nranks > 1 && node(next) == node(s->rank))
      log << info_line(
          fmt::format("Channel 00/0 : {}[{}] -> {}[{}] via P2P/CUMEM/read", s->rank, dev(s->rank), next, dev(next)));
    if (s->nranks > 1 && node(next) != node(s->rank))
      log << info_line(fmt::format("Channel 00/0 : {}[{}] -> {}[{}] [send] via NET/Socket/0", s->rank, dev(s->rank),
                                   next, dev(next)));
    if (s->nranks > 1 && node(prev) != node(s->rank))
      log << info_line(fmt::format("Channel 00/0 : {}[{}] -> {}[{}] [receive] via NET/Socket/0", prev, dev(prev),
                                   s->rank, dev(s->rank)));
  }
  ++s->ops;
  bool spans = false;
  for (int w : s->world_ranks) spans = spans || w / ranks_per_node_ != s->world_ranks[0] / ranks_per_node_;
  sim_enqueue(stream, sim_cost_us(stream, bytes, spans ? kInterGbps : kIntraGbps),
              [this, call, comm, on = &stream, bytes, work](double& clock_us) {
                run_collective(call, comm, *on, bytes, work, clock_us);
              });
  return Status::ok();
}

Status SimNccl::all_reduce(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  return queue_collective("ncclAllReduce", comm, stream, bytes, [c, bytes, n = sim(comm)->nranks](void* m) {
    std::vector<std::byte> copy;
    const void* in = unaliased(c.send, bytes, c.recv, bytes, copy);
    check_mpi_call(MPI_Allreduce(in, c.recv, static_cast<int>(c.count), mpi_type(c.dtype), mpi_op(c.dtype, c.redop),
                                 *static_cast<MPI_Comm*>(m)),
                   "MPI_Allreduce");
    divide_for_avg(c, c.recv, c.count, n);
  });
}

Status SimNccl::all_gather(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  const int n = sim(comm)->nranks;
  return queue_collective("ncclAllGather", comm, stream, bytes * n, [c, bytes, n](void* m) {
    std::vector<std::byte> copy;
    const void* in = unaliased(c.send, bytes, c.recv, bytes * n, copy);
    const auto count = static_cast<int>(c.count);
    check_mpi_call(
        MPI_Allgather(in, count, mpi_type(c.dtype), c.recv, count, mpi_type(c.dtype), *static_cast<MPI_Comm*>(m)),
        "MPI_Allgather");
  });
}

Status SimNccl::reduce_scatter(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  const int n = sim(comm)->nranks;
  return queue_collective("ncclReduceScatter", comm, stream, bytes * n, [c, bytes, n](void* m) {
    std::vector<std::byte> copy;
    const void* in = unaliased(c.send, bytes * n, c.recv, bytes, copy);
    check_mpi_call(MPI_Reduce_scatter_block(in, c.recv, static_cast<int>(c.count), mpi_type(c.dtype),
                                            mpi_op(c.dtype, c.redop), *static_cast<MPI_Comm*>(m)),
                   "MPI_Reduce_scatter_block");
    divide_for_avg(c, c.recv, c.count, n);
  });
}

Status SimNccl::broadcast(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  const bool root = sim(comm)->rank == c.root;
  return queue_collective("ncclBroadcast", comm, stream, bytes, [c, bytes, root](void* m) {
    if (root && c.send != c.recv) std::memmove(c.recv, c.send, bytes);
    check_mpi_call(MPI_Bcast(c.recv, static_cast<int>(c.count), mpi_type(c.dtype), c.root, *static_cast<MPI_Comm*>(m)),
                   "MPI_Bcast");
  });
}

Status SimNccl::reduce(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  const int n = sim(comm)->nranks;
  const bool root = sim(comm)->rank == c.root;
  return queue_collective("ncclReduce", comm, stream, bytes, [c, bytes, n, root](void* m) {
    std::vector<std::byte> copy;
    const void* in = unaliased(c.send, bytes, c.recv, bytes, copy);
    check_mpi_call(MPI_Reduce(in, c.recv, static_cast<int>(c.count), mpi_type(c.dtype), mpi_op(c.dtype, c.redop),
                              c.root, *static_cast<MPI_Comm*>(m)),
                   "MPI_Reduce");
    if (root) divide_for_avg(c, c.recv, c.count, n);
  });
}

Status SimNccl::gather(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  const int n = sim(comm)->nranks;
  return queue_collective("ncclGather", comm, stream, bytes * n, [c, bytes, n](void* m) {
    std::vector<std::byte> copy;
    const void* in = unaliased(c.send, bytes, c.recv, bytes * n, copy);
    const auto count = static_cast<int>(c.count);
    check_mpi_call(
        MPI_Gather(in, count, mpi_type(c.dtype), c.recv, count, mpi_type(c.dtype), c.root, *static_cast<MPI_Comm*>(m)),
        "MPI_Gather");
  });
}

Status SimNccl::scatter(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  const int n = sim(comm)->nranks;
  return queue_collective("ncclScatter", comm, stream, bytes * n, [c, bytes, n](void* m) {
    std::vector<std::byte> copy;
    const void* in = unaliased(c.send, bytes * n, c.recv, bytes, copy);
    const auto count = static_cast<int>(c.count);
    check_mpi_call(
        MPI_Scatter(in, count, mpi_type(c.dtype), c.recv, count, mpi_type(c.dtype), c.root, *static_cast<MPI_Comm*>(m)),
        "MPI_Scatter");
  });
}

Status SimNccl::point_to_point(bool is_send, const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  SimComm* s = sim(comm);
  if (s->state.state != State::ok) return failed("ncclInvalidUsage (a send or receive on a communicator not ready)");
  if (c.root < 0 || c.root >= s->nranks) return failed(fmt::format("ncclInvalidArgument (peer {})", c.root));
  if (s->peers_logged.insert(c.root).second) {
    // NCCL connects a peer at the first send or receive between the two, on both sides.
    const bool same_node = s->world_ranks[static_cast<std::size_t>(c.root)] / ranks_per_node_ ==
                           s->world_ranks[static_cast<std::size_t>(s->rank)] / ranks_per_node_;
    const int from = is_send ? s->rank : c.root;
    const int to = is_send ? c.root : s->rank;
    std::ofstream(NcclDebugLog::get().path(), std::ios::app)
        << info_line(same_node ? fmt::format("Channel 00/1 : {}[0] -> {}[0] via P2P/CUMEM/read", from, to)
                               : fmt::format("Channel 00/1 : {}[0] -> {}[0] [{}] via NET/Socket/0", from, to,
                                             is_send ? "send" : "receive"));
  }
  ++s->ops;
  auto p = std::make_shared<Pending>(Pending{is_send, c, s, &stream});
  if (group_depth_ > 0) {
    grouped_.push_back(p);
    return Status::ok();
  }
  const std::size_t bytes = c.count * dtype_bytes(c.dtype);
  sim_enqueue(stream, sim_cost_us(stream, bytes, kIntraGbps), [p](double&) {
    const auto count = static_cast<int>(p->call.count);
    if (p->is_send)
      check_mpi_call(MPI_Send(p->call.send, count, mpi_type(p->call.dtype), p->call.root, 0, p->comm->mpi), "MPI_Send");
    else
      check_mpi_call(
          MPI_Recv(p->call.recv, count, mpi_type(p->call.dtype), p->call.root, 0, p->comm->mpi, MPI_STATUS_IGNORE),
          "MPI_Recv");
  });
  return Status::ok();
}

Status SimNccl::send(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  return point_to_point(true, c, comm, stream);
}

Status SimNccl::recv(const Call& c, nccl::CommHandle comm, gpu::DeviceStream& stream) {
  return point_to_point(false, c, comm, stream);
}

Status SimNccl::group_start() {
  ++group_depth_;
  return Status::ok();
}

// The group's sends and receives run together: every receive posted, then every send, then all awaited.
Status SimNccl::group_end() {
  if (group_depth_ == 0) return failed("ncclInvalidUsage (ncclGroupEnd without ncclGroupStart)");
  if (--group_depth_ > 0 || grouped_.empty()) return Status::ok();
  std::vector<std::shared_ptr<Pending>> ops = std::move(grouped_);
  grouped_.clear();
  std::size_t bytes = 0;
  for (const auto& p : ops) bytes += p->call.count * dtype_bytes(p->call.dtype);
  gpu::DeviceStream& stream = *ops.front()->stream;
  sim_enqueue(stream, sim_cost_us(stream, bytes, kIntraGbps), [ops](double&) {
    std::vector<MPI_Request> requests(ops.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Pending& p = *ops[i];
      const auto count = static_cast<int>(p.call.count);
      if (!p.is_send)
        check_mpi_call(MPI_Irecv(p.call.recv, count, mpi_type(p.call.dtype), p.call.root, 0, p.comm->mpi, &requests[i]),
                       "MPI_Irecv");
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Pending& p = *ops[i];
      const auto count = static_cast<int>(p.call.count);
      if (p.is_send)
        check_mpi_call(MPI_Isend(p.call.send, count, mpi_type(p.call.dtype), p.call.root, 0, p.comm->mpi, &requests[i]),
                       "MPI_Isend");
    }
    check_mpi_call(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  });
  return Status::ok();
}

}  // namespace fb::test
