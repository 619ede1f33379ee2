// The control plane: an owning wrapper of an MPI communicator with the few
// collectives the engine needs to agree, split scopes and gather statistics.
// Every backend is launched under MPI, so this is backend-agnostic: the data
// plane (MPI, NCCL, CUDA copies) lives behind the Backend interface.
//
// Calls ending in `_quiet` wait by polling with short sleeps instead of
// spinning, so ranks that sit out a measurement do not steal CPU from the
// ranks that are measuring.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fb {

class Comm {
 public:
  Comm() = default;                    // the null communicator
  static Comm world();                 // MPI_COMM_WORLD, not owned
  static Comm adopt(MPI_Comm comm);    // takes ownership, frees on destruction

  bool valid() const { return comm_ != MPI_COMM_NULL; }
  int rank() const;
  int size() const;
  MPI_Comm native() const { return comm_; }

  // MPI_Comm_split; color < 0 gives the null communicator (MPI_UNDEFINED).
  Comm split(int color, int key) const;
  // The ranks that share memory with this one (one node).
  Comm split_node() const;
  Comm dup() const;

  void barrier_quiet() const;
  // In-place element-wise reductions over all ranks of this communicator.
  void allreduce_max_quiet(std::span<double> values) const;
  void allreduce_min_quiet(std::span<double> values) const;
  void allreduce_sum_quiet(std::span<double> values) const;
  void allreduce_max_quiet(std::span<std::int64_t> values) const;
  void allreduce_sum_quiet(std::span<std::int64_t> values) const;
  // (value, rank) of the largest value over ranks.
  std::pair<double, int> maxloc_quiet(double value) const;
  void bcast_quiet(std::span<std::int64_t> values, int root) const;
  std::string bcast_string_quiet(const std::string& text, int root) const;
  std::vector<std::string> allgather_strings(const std::string& text) const;

 private:
  struct Owned;
  explicit Comm(MPI_Comm comm, bool owned);
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<Owned> owner_;
};

// Collective: "" when `my_error` is empty on every rank, else the error of the
// lowest rank that has one (prefixed with its rank and host when not rank 0),
// on every rank. Lets all ranks stop together on input only some can judge.
std::string agree_on_error(const Comm& comm, const std::string& my_error);

// Wait for `request` polling every few microseconds, sleeping in between.
void wait_quiet(MPI_Request& request);

// This host's name, as the record and the scopes use it.
std::string host_name();

// Owns MPI_Init/MPI_Finalize for a command.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static std::string library_version();
};

}  // namespace fb
