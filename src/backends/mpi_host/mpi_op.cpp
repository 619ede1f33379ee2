#include "mpi_op.hpp"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "mpi_types.hpp"

namespace fb {
namespace {

constexpr int kTagData = 7001;
constexpr int kTagAck = 7002;

}  // namespace

MpiOp::MpiOp(MPI_Comm comm, const OpSpec& spec, void* in, void* out)
    : comm_(comm), spec_(spec), type_(mpi::datatype(spec.dtype)), redop_(mpi::reduction(spec.redop)) {
  if (mpi_call(spec.op) == MpiCall::none)  // the engine refuses it first (backend_runs)
    throw std::logic_error(fmt::format("MpiOp: {} is not an op of the mpi backends", name(spec.op)));
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank", comm);
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size", comm);
  word_ = dtype_bytes(spec.dtype);
  out_ = out;
  result_ = out;
  const std::size_t rank_block = static_cast<std::size_t>(rank_) * spec.layout.block * word_;
  // In-place variants read their input from the output buffer, at the
  // position each MPI call defines for MPI_IN_PLACE; scatter's result lands at
  // the rank's block of it, where the root's own block already is (as
  // nccl-tests places it, and NCCL's in-place rule for ncclScatter).
  if (!spec.in_place) {
    in_ = in;
  } else if (spec.op == Op::all_gather || spec.op == Op::gather) {
    in_ = static_cast<char*>(out) + rank_block;
  } else {
    in_ = out;
    if (spec.op == Op::scatter) result_ = static_cast<char*>(out) + rank_block;
  }
  count_ = static_cast<int>(spec.layout.block);
  if (is_pair_op(spec.op)) {
    peer_ = pair_peer(spec, rank_);
    requests_.resize(2 * static_cast<std::size_t>(spec.window));
  }
}

void MpiOp::run() { check_mpi(call(), call_name(), comm_); }

void MpiOp::start() { check_mpi(start_call(), call_name(), comm_); }

bool MpiOp::finished() {
  if (pending_ == 0) return true;
  int done = 0;
  check_mpi(MPI_Testall(pending_, requests_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall", comm_);
  if (done) pending_ = 0;
  return done != 0;
}

double MpiOp::ops_per_iteration() const { return fb::ops_per_iteration(spec_); }

void MpiOp::fill_check() { fill_for_check(check_context(), in_, result_); }

std::uint64_t MpiOp::count_wrong() { return verify_output(check_context(), result_).wrong; }

void MpiOp::corrupt_output_element(std::uint64_t index) {
  if (index >= spec_.layout.out_elems) return;
  auto* bytes = static_cast<unsigned char*>(result_) + index * word_;
  bytes[word_ - 1] ^= 0x40;  // flips a high bit of the element in every host datatype
}

CheckContext MpiOp::check_context() const { return fb::check_context(spec_, rank_, size_); }

const char* MpiOp::call_name() const {
  switch (mpi_call(spec_.op)) {
    case MpiCall::allreduce:
      return "MPI_Allreduce";
    case MpiCall::allgather:
      return "MPI_Allgather";
    case MpiCall::reduce_scatter_block:
      return "MPI_Reduce_scatter_block";
    case MpiCall::bcast:
      return "MPI_Bcast";
    case MpiCall::reduce:
      return "MPI_Reduce";
    case MpiCall::alltoall:
      return "MPI_Alltoall";
    case MpiCall::gather:
      return "MPI_Gather";
    case MpiCall::scatter:
      return "MPI_Scatter";
    case MpiCall::ring_sendrecv:
      return spec_.in_place ? "MPI_Sendrecv_replace" : "MPI_Sendrecv";
    case MpiCall::pingpong:
    case MpiCall::window:
      return "MPI point-to-point";
    case MpiCall::none:
      break;
  }
  return "no MPI call";
}

int MpiOp::call() {
  switch (mpi_call(spec_.op)) {
    case MpiCall::allreduce:
      return MPI_Allreduce(send_buf(), out_, count_, type_, redop_, comm_);
    case MpiCall::allgather:
      return spec_.in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_)
                            : MPI_Allgather(in_, count_, type_, out_, count_, type_, comm_);
    case MpiCall::reduce_scatter_block:
      return MPI_Reduce_scatter_block(send_buf(), out_, count_, type_, redop_, comm_);
    case MpiCall::bcast:
      return MPI_Bcast(out_, count_, type_, spec_.root, comm_);
    case MpiCall::reduce:
      if (spec_.in_place && rank_ != spec_.root) return MPI_Reduce(out_, nullptr, count_, type_, redop_, spec_.root, comm_);
      return MPI_Reduce(send_buf(), out_, count_, type_, redop_, spec_.root, comm_);
    case MpiCall::alltoall:
      return spec_.in_place ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_)
                            : MPI_Alltoall(in_, count_, type_, out_, count_, type_, comm_);
    case MpiCall::gather:
      return gather(nullptr);
    case MpiCall::scatter:
      return scatter(nullptr);
    case MpiCall::ring_sendrecv:
      return ring_sendrecv();
    case MpiCall::pingpong:
      return pingpong();
    case MpiCall::window:
      return spec_.op == Op::bidir ? window(true, true) : window(rank_ == spec_.peer_a, rank_ == spec_.peer_b);
    case MpiCall::none:
      break;  // refused before the op was prepared
  }
  return MPI_ERR_OTHER;
}

int MpiOp::start_call() {
  if (requests_.size() < 2) requests_.resize(2);
  MPI_Request* r = requests_.data();
  pending_ = 1;
  switch (mpi_call(spec_.op)) {
    case MpiCall::allreduce:
      return MPI_Iallreduce(send_buf(), out_, count_, type_, redop_, comm_, r);
    case MpiCall::allgather:
      return spec_.in_place ? MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_, r)
                            : MPI_Iallgather(in_, count_, type_, out_, count_, type_, comm_, r);
    case MpiCall::reduce_scatter_block:
      return MPI_Ireduce_scatter_block(send_buf(), out_, count_, type_, redop_, comm_, r);
    case MpiCall::bcast:
      return MPI_Ibcast(out_, count_, type_, spec_.root, comm_, r);
    case MpiCall::reduce:
      if (spec_.in_place && rank_ != spec_.root) return MPI_Ireduce(out_, nullptr, count_, type_, redop_, spec_.root, comm_, r);
      return MPI_Ireduce(send_buf(), out_, count_, type_, redop_, spec_.root, comm_, r);
    case MpiCall::alltoall:
      return spec_.in_place ? MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_, r)
                            : MPI_Ialltoall(in_, count_, type_, out_, count_, type_, comm_, r);
    case MpiCall::gather:
      return gather(r);
    case MpiCall::scatter:
      return scatter(r);
    case MpiCall::ring_sendrecv:
      if (!spec_.in_place) {
        pending_ = 2;
        const int next = (rank_ + 1) % size_;
        const int prev = (rank_ - 1 + size_) % size_;
        const int rc = MPI_Irecv(out_, count_, type_, prev, kTagData, comm_, &r[0]);
        return rc != MPI_SUCCESS ? rc : MPI_Isend(in_, count_, type_, next, kTagData, comm_, &r[1]);
      }
      break;
    case MpiCall::pingpong:
    case MpiCall::window:
    case MpiCall::none:
      break;
  }
  pending_ = 0;
  return call();  // no non-blocking form: complete it now
}

// MPI_IN_PLACE is the root's send buffer only: its own block is already at
// its place in the output (MPI_Gather(3), "use of in-place option"). The
// others' receive buffer is unused.
int MpiOp::gather(MPI_Request* request) {
  const void* send = spec_.in_place && root() ? MPI_IN_PLACE : in_;
  if (request) return MPI_Igather(send, count_, type_, out_, count_, type_, spec_.root, comm_, request);
  return MPI_Gather(send, count_, type_, out_, count_, type_, spec_.root, comm_);
}

// MPI_IN_PLACE is the root's receive buffer only: its own block stays where
// it is in the input (MPI_Scatter(3), "use of in-place option"). The others'
// send buffer is unused.
int MpiOp::scatter(MPI_Request* request) {
  void* recv = spec_.in_place && root() ? MPI_IN_PLACE : result_;
  if (request) return MPI_Iscatter(in_, count_, type_, recv, count_, type_, spec_.root, comm_, request);
  return MPI_Scatter(in_, count_, type_, recv, count_, type_, spec_.root, comm_);
}

int MpiOp::ring_sendrecv() {
  const int next = (rank_ + 1) % size_;
  const int prev = (rank_ - 1 + size_) % size_;
  if (spec_.in_place)
    return MPI_Sendrecv_replace(out_, count_, type_, next, kTagData, prev, kTagData, comm_, MPI_STATUS_IGNORE);
  return MPI_Sendrecv(in_, count_, type_, next, kTagData, out_, count_, type_, prev, kTagData, comm_,
                      MPI_STATUS_IGNORE);
}

int MpiOp::pingpong() {
  if (peer_ < 0) return MPI_SUCCESS;
  if (rank_ == spec_.peer_a) {
    int rc = MPI_Send(in_, count_, type_, peer_, kTagData, comm_);
    return rc != MPI_SUCCESS ? rc : MPI_Recv(out_, count_, type_, peer_, kTagData, comm_, MPI_STATUS_IGNORE);
  }
  int rc = MPI_Recv(out_, count_, type_, peer_, kTagData, comm_, MPI_STATUS_IGNORE);
  return rc != MPI_SUCCESS ? rc : MPI_Send(in_, count_, type_, peer_, kTagData, comm_);
}

int MpiOp::window(bool sends, bool receives) {
  if (peer_ < 0) return MPI_SUCCESS;
  const bool is_a = rank_ == spec_.peer_a;
  std::size_t n = 0;
  for (int w = 0; w < spec_.window; ++w) {
    int rc = MPI_SUCCESS;
    if (receives && (spec_.op == Op::bidir || !is_a))
      rc = MPI_Irecv(out_, count_, type_, peer_, kTagData, comm_, &requests_[n++]);
    if (rc == MPI_SUCCESS && sends && (spec_.op == Op::bidir || is_a))
      rc = MPI_Isend(in_, count_, type_, peer_, kTagData, comm_, &requests_[n++]);
    if (rc != MPI_SUCCESS) return rc;
  }
  int rc = MPI_Waitall(static_cast<int>(n), requests_.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS || spec_.op == Op::bidir) return rc;
  if (is_a) return MPI_Recv(nullptr, 0, MPI_BYTE, peer_, kTagAck, comm_, MPI_STATUS_IGNORE);
  return MPI_Send(nullptr, 0, MPI_BYTE, peer_, kTagAck, comm_);
}

Support mpi_supports(const OpSpec& spec, std::string_view backend) {
  if (mpi::datatype(spec.dtype) == MPI_DATATYPE_NULL)
    return Support::no(fmt::format("MPI has no {} datatype; the {} backend takes int8, uint8, int32, uint32, "
                                   "int64, uint64, float, double",
                                   name(spec.dtype), backend));
  if (is_reduction(spec.op) && mpi::reduction(spec.redop) == MPI_OP_NULL)
    return Support::no(fmt::format("MPI has no '{}' reduction; the {} backend takes sum, prod, max, min",
                                   name(spec.redop), backend));
  if (spec.op == Op::broadcast && !spec.in_place)
    return Support::no(fmt::format("MPI_Bcast has a single buffer: broadcast runs in-place only on the {} backend",
                                   backend));
  if (is_pair_op(spec.op) && spec.in_place) return Support::no("point-to-point ops have no in-place variant");
  if (spec.layout.block > static_cast<std::uint64_t>(INT_MAX))
    return Support::no(fmt::format("{} elements per call exceed MPI's int count; use a smaller -e or a wider "
                                   "datatype",
                                   spec.layout.block));
  return Support::yes();
}

}  // namespace fb
