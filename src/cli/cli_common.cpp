#include "cli_common.hpp"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <exception>

#include "fabricbench/core/errors.hpp"

namespace fb::cli {

int abort_on_error(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitRunError);
    return kExitRunError;
  }
}

}  // namespace fb::cli
