// The one check of an MPI return code: the engine sets MPI_ERRORS_RETURN
// (MpiSession), so a failed call returns here instead of aborting the job,
// and the message says which call failed where, as NCCL's checks do.
#include <fmt/format.h>

#include <cstdio>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb {

int world_rank() {
  int initialized = 0;
  int finalized = 0;
  // Their own codes are not checked: this is what the check itself asks.
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  int rank = -1;
  if (initialized && !finalized && MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) rank = -1;
  return rank;
}

void check_mpi(int rc, const char* call, MPI_Comm group) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = std::snprintf(text, sizeof(text), "MPI error code %d", rc);
  int group_rank = -1;
  if (group != MPI_COMM_NULL && MPI_Comm_rank(group, &group_rank) != MPI_SUCCESS) group_rank = -1;
  const std::string in_group = group == MPI_COMM_NULL ? "" : fmt::format(", rank {} of the group", group_rank);
  throw RunError(fmt::format("{} failed on rank {} (host {}{}): {}", call, world_rank(), host_name(), in_group,
                             std::string_view(text, static_cast<std::size_t>(len))));
}

}  // namespace fb
