#include "mpi_op.hpp"

#include <fmt/format.h>

#include <climits>

#include "fabricbench/core/errors.hpp"
#include "mpi_types.hpp"

namespace fb {
namespace {

constexpr int kTagData = 7001;
constexpr int kTagAck = 7002;

}  // namespace

MpiOp::MpiOp(MPI_Comm comm, const OpSpec& spec, void* in, void* out)
    : comm_(comm), spec_(spec), type_(mpi::datatype(spec.dtype)), redop_(mpi::reduction(spec.redop)) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  word_ = dtype_bytes(spec.dtype);
  out_ = out;
  // In-place variants read their input from the output buffer, at the
  // position each MPI call defines for MPI_IN_PLACE.
  if (!spec.in_place) {
    in_ = in;
  } else if (spec.op == Op::all_gather) {
    in_ = static_cast<char*>(out) + static_cast<std::size_t>(rank_) * spec.layout.block * word_;
  } else {
    in_ = out;
  }
  count_ = static_cast<int>(spec.layout.block);
  if (is_pair_op(spec.op)) {
    peer_ = pair_peer(spec, rank_);
    requests_.resize(2 * static_cast<std::size_t>(spec.window));
  }
}

void MpiOp::run() {
  const int rc = call();
  if (rc != MPI_SUCCESS) throw RunError(mpi::error_text(call_name(), rc, comm_));
}

void MpiOp::start() {
  const int rc = start_call();
  if (rc != MPI_SUCCESS) throw RunError(mpi::error_text(call_name(), rc, comm_));
}

bool MpiOp::finished() {
  if (pending_ == 0) return true;
  int done = 0;
  const int rc = MPI_Testall(pending_, requests_.data(), &done, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) throw RunError(mpi::error_text("MPI_Testall", rc, comm_));
  if (done) pending_ = 0;
  return done != 0;
}

double MpiOp::ops_per_iteration() const { return fb::ops_per_iteration(spec_); }

void MpiOp::fill_check() { fill_for_check(check_context(), in_, out_); }

std::uint64_t MpiOp::count_wrong() { return verify_output(check_context(), out_).wrong; }

void MpiOp::corrupt_output_element(std::uint64_t index) {
  if (index >= spec_.layout.out_elems) return;
  auto* bytes = static_cast<unsigned char*>(out_) + index * word_;
  bytes[word_ - 1] ^= 0x40;  // flips a high bit of the element in every host datatype
}

CheckContext MpiOp::check_context() const { return fb::check_context(spec_, rank_, size_); }

const char* MpiOp::call_name() const {
  switch (spec_.op) {
    case Op::all_reduce:
      return "MPI_Allreduce";
    case Op::all_gather:
      return "MPI_Allgather";
    case Op::reduce_scatter:
      return "MPI_Reduce_scatter_block";
    case Op::broadcast:
      return "MPI_Bcast";
    case Op::reduce:
      return "MPI_Reduce";
    case Op::alltoall:
      return "MPI_Alltoall";
    case Op::sendrecv:
      return spec_.in_place ? "MPI_Sendrecv_replace" : "MPI_Sendrecv";
    default:
      return "MPI point-to-point";
  }
}

int MpiOp::call() {
  switch (spec_.op) {
    case Op::all_reduce:
      return MPI_Allreduce(send_buf(), out_, count_, type_, redop_, comm_);
    case Op::all_gather:
      return spec_.in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_)
                            : MPI_Allgather(in_, count_, type_, out_, count_, type_, comm_);
    case Op::reduce_scatter:
      return MPI_Reduce_scatter_block(send_buf(), out_, count_, type_, redop_, comm_);
    case Op::broadcast:
      return MPI_Bcast(out_, count_, type_, spec_.root, comm_);
    case Op::reduce:
      if (spec_.in_place && rank_ != spec_.root) return MPI_Reduce(out_, nullptr, count_, type_, redop_, spec_.root, comm_);
      return MPI_Reduce(send_buf(), out_, count_, type_, redop_, spec_.root, comm_);
    case Op::alltoall:
      return spec_.in_place ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_)
                            : MPI_Alltoall(in_, count_, type_, out_, count_, type_, comm_);
    case Op::sendrecv:
      return ring_sendrecv();
    case Op::pingpong:
      return pingpong();
    case Op::unidir:
      return window(rank_ == spec_.peer_a, rank_ == spec_.peer_b);
    case Op::bidir:
      return window(true, true);
    default:
      break;  // copy ops: refused by mpi_supports
  }
  return MPI_ERR_OTHER;
}

int MpiOp::start_call() {
  if (requests_.size() < 2) requests_.resize(2);
  MPI_Request* r = requests_.data();
  pending_ = 1;
  switch (spec_.op) {
    case Op::all_reduce:
      return MPI_Iallreduce(send_buf(), out_, count_, type_, redop_, comm_, r);
    case Op::all_gather:
      return spec_.in_place ? MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_, r)
                            : MPI_Iallgather(in_, count_, type_, out_, count_, type_, comm_, r);
    case Op::reduce_scatter:
      return MPI_Ireduce_scatter_block(send_buf(), out_, count_, type_, redop_, comm_, r);
    case Op::broadcast:
      return MPI_Ibcast(out_, count_, type_, spec_.root, comm_, r);
    case Op::reduce:
      if (spec_.in_place && rank_ != spec_.root) return MPI_Ireduce(out_, nullptr, count_, type_, redop_, spec_.root, comm_, r);
      return MPI_Ireduce(send_buf(), out_, count_, type_, redop_, spec_.root, comm_, r);
    case Op::alltoall:
      return spec_.in_place ? MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out_, count_, type_, comm_, r)
                            : MPI_Ialltoall(in_, count_, type_, out_, count_, type_, comm_, r);
    case Op::sendrecv:
      if (!spec_.in_place) {
        pending_ = 2;
        const int next = (rank_ + 1) % size_;
        const int prev = (rank_ - 1 + size_) % size_;
        const int rc = MPI_Irecv(out_, count_, type_, prev, kTagData, comm_, &r[0]);
        return rc != MPI_SUCCESS ? rc : MPI_Isend(in_, count_, type_, next, kTagData, comm_, &r[1]);
      }
      break;
    default:
      break;
  }
  pending_ = 0;
  return call();  // no non-blocking form: complete it now
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
  if (is_copy_op(spec.op))
    return Support::no(fmt::format("{} is a copy path inside a GPU node: run it with --backend cuda", fb::name(spec.op)));
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
