// One op through the MPI library on buffers the caller owns: host memory for
// the mpi backend, device memory for mpi-cuda (a CUDA-aware MPI takes device
// pointers in the same calls). The check runs on the host here; a device
// backend overrides fill_check, count_wrong and corrupt_output_element.
#pragma once

#include <mpi.h>

#include <string_view>
#include <vector>

#include "fabricbench/backends/corruptible.hpp"
#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/host_check.hpp"

namespace fb {

// The MPI call behind each op, `none` where the mpi backends have no code.
// One exhaustive switch: a new op stops the build here until it is given a
// call (or none), and the backends' op list (mpi_ops) is read from it.
enum class MpiCall {
  none, allreduce, allgather, reduce_scatter_block, bcast, reduce, alltoall, gather, scatter,
  ring_sendrecv, pingpong, window,
};

constexpr MpiCall mpi_call(Op op) {
  switch (op) {
    case Op::all_reduce: return MpiCall::allreduce;
    case Op::all_gather: return MpiCall::allgather;
    case Op::reduce_scatter: return MpiCall::reduce_scatter_block;
    case Op::broadcast: return MpiCall::bcast;
    case Op::reduce: return MpiCall::reduce;
    case Op::alltoall: return MpiCall::alltoall;
    case Op::gather: return MpiCall::gather;
    case Op::scatter: return MpiCall::scatter;
    case Op::sendrecv: return MpiCall::ring_sendrecv;
    case Op::pingpong: return MpiCall::pingpong;
    case Op::unidir:
    case Op::bidir: return MpiCall::window;
    case Op::copy_d2d_ce:
    case Op::copy_d2d_sm:
    case Op::copy_h2d_pinned:
    case Op::copy_d2h_pinned:
    case Op::copy_h2d_pageable:
    case Op::copy_d2h_pageable:
    case Op::copy_bidir_pinned:
    case Op::copy_peer:
    case Op::copy_peer_staged:
    case Op::kernel_launch: return MpiCall::none;
  }
  return MpiCall::none;
}

// The ops of the mpi and mpi-cuda backends.
inline constexpr OpSet kMpiOps = OpSet::where([](Op op) { return mpi_call(op) != MpiCall::none; });
inline constexpr std::string_view kMpiElsewhere = "copy paths inside a GPU node run on --backend cuda";

class MpiOp : public PreparedOp, public CorruptibleOutput {
 public:
  MpiOp(MPI_Comm comm, const OpSpec& spec, void* in, void* out);

  void run() override;
  // Non-blocking forms of the collectives and the ring sendrecv, so a
  // training step can run them under compute; the others complete in start().
  void start() override;
  bool finished() override;
  bool participates() const override { return !is_pair_op(spec_.op) || peer_ >= 0; }
  double ops_per_iteration() const override;
  void fill_check() override;
  std::uint64_t count_wrong() override;
  void corrupt_output_element(std::uint64_t index) override;

 protected:
  CheckContext check_context() const;
  const OpSpec& spec() const { return spec_; }
  void* input() const { return in_; }
  void* result() const { return result_; }  // where the output lands (and is checked)

 private:
  const char* call_name() const;
  const void* send_buf() const { return spec_.in_place ? MPI_IN_PLACE : in_; }
  bool root() const { return rank_ == spec_.root; }
  int call();
  int start_call();
  int gather(MPI_Request* request);   // blocking when `request` is null
  int scatter(MPI_Request* request);
  int ring_sendrecv();
  int pingpong();
  int window(bool sends, bool receives);

  MPI_Comm comm_;
  OpSpec spec_;
  MPI_Datatype type_;
  MPI_Op redop_;
  int rank_ = 0;
  int size_ = 1;
  int peer_ = -1;
  int count_ = 0;
  std::size_t word_ = 1;
  void* in_ = nullptr;
  void* out_ = nullptr;
  void* result_ = nullptr;
  std::vector<MPI_Request> requests_;
  int pending_ = 0;  // requests of a started iteration not yet complete
};

// What MPI can run of its ops: its datatypes, its reductions, an int count.
// `backend` names the backend in the reasons.
Support mpi_supports(const OpSpec& spec, std::string_view backend);

}  // namespace fb
