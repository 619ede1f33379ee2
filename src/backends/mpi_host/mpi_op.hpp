// One op through the MPI library on buffers the caller owns: host memory for
// the mpi backend, device memory for mpi-cuda (a CUDA-aware MPI takes device
// pointers in the same calls). The check runs on the host here; a device
// backend overrides fill_check, count_wrong and corrupt_output_element.
#pragma once

#include <mpi.h>

#include <string_view>
#include <vector>

#include "fabricbench/backends/backend.hpp"
#include "fabricbench/core/host_check.hpp"

namespace fb {

class MpiOp : public PreparedOp {
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
  void* output() const { return out_; }

 private:
  const char* call_name() const;
  const void* send_buf() const { return spec_.in_place ? MPI_IN_PLACE : in_; }
  int call();
  int start_call();
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
  std::vector<MPI_Request> requests_;
  int pending_ = 0;  // requests of a started iteration not yet complete
};

// What MPI can run: its datatypes, its reductions, an int count. `backend`
// names the backend in the reasons.
Support mpi_supports(const OpSpec& spec, std::string_view backend);

}  // namespace fb
