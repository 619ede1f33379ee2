#include "cuda_nccl.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <cstring>

#include "cuda_common/cuda_stream.hpp"
#include "nccl_debug.hpp"
#include "nccl_types.hpp"

namespace fb::nccl {
namespace {

ncclComm_t raw(CommHandle comm) { return static_cast<ncclComm_t>(comm); }

// NCCL's result as a Status; a failure names the error and NCCL's last message.
Status status(ncclResult_t rc, ncclComm_t comm) {
  if (rc == ncclSuccess) return Status::ok();
  if (rc == ncclInProgress) return {Status::State::in_progress, ""};
  std::string what = ncclGetErrorString(rc);
  if (const char* last = ncclGetLastError(comm); last && *last) what += fmt::format(" ({})", last);
  return {Status::State::failed, what};
}

class CudaNccl final : public Collectives {
 public:
  std::string version() override { return nccl::version(); }
  bool has_datatype(Dtype dtype) override { return datatype(dtype).has_value(); }
  bool has_gather() override { return NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0); }
  std::string log_hint() override { return NcclDebugLog::get().path(); }

  std::string unique_id() override {
    ncclUniqueId id{};
    const Status s = status(ncclGetUniqueId(&id), nullptr);
    if (s.state == Status::State::failed) return {};  // init_rank then fails on an empty id, naming it
    return std::string(reinterpret_cast<const char*>(&id), sizeof(id));
  }
  Status init_rank(CommHandle& comm, int nranks, const std::string& id, int rank) override {
    if (id.size() != sizeof(ncclUniqueId))
      return {Status::State::failed, fmt::format("no unique id from rank 0 (ncclGetUniqueId failed there)")};
    ncclUniqueId uid{};
    std::memcpy(&uid, id.data(), sizeof(uid));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // every call may answer ncclInProgress; NcclComm polls
    ncclComm_t c = nullptr;
    const ncclResult_t rc = ncclCommInitRankConfig(&c, nranks, uid, rank, &config);
    comm = c;
    return status(rc, c);
  }
  Status split(CommHandle parent, int color, int key, CommHandle& child) override {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    // NCCL writes the child into `child` itself, maybe later from its own thread.
    return status(ncclCommSplit(raw(parent), color < 0 ? NCCL_SPLIT_NOCOLOR : color, key,
                                reinterpret_cast<ncclComm_t*>(&child), &config),
                  raw(parent));
  }
  Status async_error(CommHandle comm) override {
    ncclResult_t state = ncclSuccess;
    if (const ncclResult_t rc = ncclCommGetAsyncError(raw(comm), &state); rc != ncclSuccess)
      return status(rc, raw(comm));
    return status(state, raw(comm));
  }
  Status finalize(CommHandle comm) override { return status(ncclCommFinalize(raw(comm)), raw(comm)); }
  void destroy(CommHandle comm) noexcept override { ncclCommDestroy(raw(comm)); }
  void abort(CommHandle comm) noexcept override { ncclCommAbort(raw(comm)); }

  Status all_reduce(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(ncclAllReduce(c.send, c.recv, c.count, type(c), reduction(c.redop), raw(comm), gpu::raw_stream(s)),
                  raw(comm));
  }
  Status all_gather(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(ncclAllGather(c.send, c.recv, c.count, type(c), raw(comm), gpu::raw_stream(s)), raw(comm));
  }
  Status reduce_scatter(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(
        ncclReduceScatter(c.send, c.recv, c.count, type(c), reduction(c.redop), raw(comm), gpu::raw_stream(s)),
        raw(comm));
  }
  Status broadcast(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(ncclBroadcast(c.send, c.recv, c.count, type(c), c.root, raw(comm), gpu::raw_stream(s)), raw(comm));
  }
  Status reduce(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(
        ncclReduce(c.send, c.recv, c.count, type(c), reduction(c.redop), c.root, raw(comm), gpu::raw_stream(s)),
        raw(comm));
  }
  Status gather(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    return status(ncclGather(c.send, c.recv, c.count, type(c), c.root, raw(comm), gpu::raw_stream(s)), raw(comm));
#else
    (void)c, (void)comm, (void)s;
    return {Status::State::failed, "this NCCL has no ncclGather (2.28 and later)"};
#endif
  }
  Status scatter(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    return status(ncclScatter(c.send, c.recv, c.count, type(c), c.root, raw(comm), gpu::raw_stream(s)), raw(comm));
#else
    (void)c, (void)comm, (void)s;
    return {Status::State::failed, "this NCCL has no ncclScatter (2.28 and later)"};
#endif
  }
  Status send(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(ncclSend(c.send, c.count, type(c), c.root, raw(comm), gpu::raw_stream(s)), raw(comm));
  }
  Status recv(const Call& c, CommHandle comm, gpu::DeviceStream& s) override {
    return status(ncclRecv(c.recv, c.count, type(c), c.root, raw(comm), gpu::raw_stream(s)), raw(comm));
  }
  Status group_start() override { return status(ncclGroupStart(), nullptr); }
  Status group_end() override { return status(ncclGroupEnd(), nullptr); }

 private:
  // The backend refuses a datatype this NCCL lacks (has_datatype) before any call.
  static ncclDataType_t type(const Call& c) { return datatype(c.dtype).value_or(ncclFloat32); }
};

}  // namespace

Collectives& cuda_nccl() {
  static CudaNccl nccl;
  return nccl;
}

}  // namespace fb::nccl
