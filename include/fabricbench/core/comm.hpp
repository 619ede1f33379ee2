// The control plane: an owning wrapper of an MPI communicator with the few
// collectives the engine needs to agree, split scopes and gather statistics.
// Every backend is launched under MPI, so this is backend-agnostic: the data
// plane (MPI, NCCL, CUDA copies) lives behind the Backend interface.
//
// Calls ending in `_quiet` wait by polling with short sleeps instead of
// spinning, so ranks that sit out a measurement do not steal CPU from the
// ranks that are measuring.
//
// Module rule (docs/architecture.md): outside the mpi_host backend's data
// plane, only core's comm*.cpp call MPI; everything else goes through Comm,
// and every MPI call is checked with check_mpi (a failed one throws RunError
// naming the call, MPI's text, the rank and its host).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fb {

// Nothing when rc is MPI_SUCCESS; else throws RunError:
// "MPI_Igather failed on rank 3 (host n07): MPI_ERR_OTHER: known error not in list",
// with ", rank 1 of the group" after the host when `group` is given.
void check_mpi(int rc, const char* call, MPI_Comm group = MPI_COMM_NULL);

// This process's rank in MPI_COMM_WORLD; -1 outside MPI_Init..MPI_Finalize.
int world_rank();

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

  // Spins until every rank is here: the common start of a timed loop.
  void barrier() const;
  void barrier_quiet() const;
  // In-place element-wise reductions over all ranks of this communicator.
  void allreduce_max_quiet(std::span<double> values) const;
  void allreduce_min_quiet(std::span<double> values) const;
  void allreduce_sum_quiet(std::span<double> values) const;
  void allreduce_max_quiet(std::span<std::int64_t> values) const;
  void allreduce_min_quiet(std::span<std::int64_t> values) const;
  void allreduce_sum_quiet(std::span<std::int64_t> values) const;
  // (value, rank) of the largest value over ranks.
  std::pair<double, int> maxloc_quiet(double value) const;
  void bcast_quiet(std::span<std::int64_t> values, int root) const;
  void bcast_bytes_quiet(std::span<std::byte> bytes, int root) const;
  std::string bcast_string_quiet(const std::string& text, int root) const;
  // Every rank's value, in rank order, on every rank.
  std::vector<std::int64_t> allgather_quiet(std::int64_t value) const;
  // Every rank's text, in rank order, on every rank; lengths may differ.
  std::vector<std::string> allgather_strings(const std::string& text) const;
  // `root` receives every rank's `values` (the same count on every rank), in
  // rank order; the other ranks get an empty vector.
  std::vector<double> gather_quiet(std::span<const double> values, int root) const;
  // The variable-length gather: `root` receives every rank's bytes, in rank
  // order, as one string per rank (lengths may differ, 0 included); the other
  // ranks get an empty vector.
  std::vector<std::string> gather_strings_quiet(std::string_view mine, int root) const;
  // gather_strings_quiet for blocks of plain values (every rank is one
  // program on one kind of machine: the bytes mean the same on the root).
  template <class T>
  std::vector<std::vector<T>> gather_blocks_quiet(std::span<const T> mine, int root) const;
  // MPI_Abort with `exit_code` as the job's; throws if MPI could not abort.
  void abort(int exit_code) const;

 private:
  struct Owned;
  explicit Comm(MPI_Comm comm, bool owned);
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<Owned> owner_;
};

// Collective: "" when `my_error` is empty on every rank, else the error of the
// lowest rank that has one (prefixed with its rank and host when not rank 0),
// on every rank. Lets all ranks stop together on input only some can judge.
[[nodiscard]] std::string agree_on_error(const Comm& comm, const std::string& my_error);

// This host's name, as the record and the scopes use it.
std::string host_name();

// After an error that left a command: while MPI runs, ends every rank of the
// job with `exit_code` (MPI_Abort; peers may be waiting for this rank in a
// collective). Returns `exit_code` when MPI is not running.
int end_job_after_error(int exit_code);

// The MPI thread level a command asks for: the least its process needs.
// Open MPI turns on its locks and atomics in every call at any level above
// MPI_THREAD_SINGLE (ompi/runtime/ompi_mpi_init.c: opal_set_using_threads),
// which costs small messages up to 0.5 us on 2 local ranks (docs/figures.md).
enum class ThreadLevel {
  single,    // MPI_THREAD_SINGLE: the process runs no thread of fabricbench's own
  funneled,  // MPI_THREAD_FUNNELED: it does (the watchdog's); only the main thread calls MPI
};

// Owns MPI_Init/MPI_Finalize for a command. Throws RunError (MPI finalized)
// when the library cannot give the thread level asked for.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv, ThreadLevel level = ThreadLevel::funneled);
  // Finalizes, unless leaving by an exception: MPI_Finalize would wait for
  // peers that wait for this rank; end_job_after_error ends the job instead.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static std::string library_version();
  // The level MPI runs at (MPI_Query_thread), as MPI names it:
  // "MPI_THREAD_FUNNELED"; "unknown (...)" when MPI cannot say.
  static std::string thread_level();

 private:
  int exceptions_at_start_;
};

template <class T>
std::vector<std::vector<T>> Comm::gather_blocks_quiet(std::span<const T> mine, int root) const {
  static_assert(std::is_trivially_copyable_v<T>, "blocks travel as bytes");
  const auto bytes = std::as_bytes(mine);
  std::vector<std::vector<T>> out;
  for (const std::string& b : gather_strings_quiet({reinterpret_cast<const char*>(bytes.data()), bytes.size()}, root)) {
    std::vector<T>& block = out.emplace_back(b.size() / sizeof(T));
    if (!block.empty()) std::memcpy(block.data(), b.data(), block.size() * sizeof(T));
  }
  return out;
}

}  // namespace fb
