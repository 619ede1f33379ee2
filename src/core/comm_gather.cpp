// Comm's gathers: fixed-size ones, and the one variable-length gather (a
// gather of the lengths, then of the bytes) that every module uses.
#include <fmt/format.h>

#include <climits>

#include "comm_internal.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

// MPI counts are ints: a block or a total past INT_MAX bytes is an error
// that says so, not a wrapped count.
int block_length(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw RunError(fmt::format("{}: {} bytes from rank {} (host {}) are more than one MPI count can hold ({})", what,
                               bytes, world_rank(), host_name(), INT_MAX));
  return static_cast<int>(bytes);
}

// Where each rank's block starts in the gathered bytes.
std::vector<int> offsets_of(const std::vector<int>& lengths, const char* what) {
  std::vector<int> offsets(lengths.size(), 0);
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = block_length(total, what);
    total += static_cast<std::size_t>(lengths[r]);
  }
  (void)block_length(total, what);
  return offsets;
}

std::vector<std::string> split_blocks(const std::string& all, const std::vector<int>& lengths,
                                      const std::vector<int>& offsets) {
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

std::size_t total_of(const std::vector<int>& lengths, const std::vector<int>& offsets) {
  return lengths.empty() ? 0 : static_cast<std::size_t>(offsets.back()) + static_cast<std::size_t>(lengths.back());
}

}  // namespace

std::vector<std::int64_t> Comm::allgather_quiet(std::int64_t value) const {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size()));
  MPI_Request req;
  check_mpi(MPI_Iallgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm_, &req), "MPI_Iallgather");
  detail::wait_quiet(req, "MPI_Iallgather");
  return all;
}

std::vector<std::string> Comm::allgather_strings(const std::string& text) const {
  const int len = block_length(text.size(), "allgather_strings");
  std::vector<int> lens(static_cast<std::size_t>(size()));
  check_mpi(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  const std::vector<int> displs = offsets_of(lens, "allgather_strings");
  std::string all(total_of(lens, displs), '\0');
  check_mpi(MPI_Allgatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm_),
            "MPI_Allgatherv");
  return split_blocks(all, lens, displs);
}

std::vector<double> Comm::gather_quiet(std::span<const double> values, int root) const {
  const int count = static_cast<int>(values.size());
  std::vector<double> all(rank() == root ? values.size() * static_cast<std::size_t>(size()) : 0);
  MPI_Request req;
  check_mpi(MPI_Igather(values.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, root, comm_, &req),
            "MPI_Igather");
  detail::wait_quiet(req, "MPI_Igather");
  return all;
}

std::vector<std::string> Comm::gather_strings_quiet(std::string_view mine, int root) const {
  const int length = block_length(mine.size(), "gather_strings_quiet");
  std::vector<int> lengths(rank() == root ? static_cast<std::size_t>(size()) : 0);
  MPI_Request req;
  check_mpi(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm_, &req), "MPI_Igather");
  detail::wait_quiet(req, "MPI_Igather");
  const std::vector<int> offsets = offsets_of(lengths, "gather_strings_quiet");
  std::string all(total_of(lengths, offsets), '\0');
  check_mpi(MPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root,
                         comm_, &req),
            "MPI_Igatherv");
  detail::wait_quiet(req, "MPI_Igatherv");
  return split_blocks(all, lengths, offsets);
}

}  // namespace fb
