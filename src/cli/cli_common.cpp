#include "cli_common.hpp"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <exception>

#include "fabricbench/core/errors.hpp"

namespace fb::cli {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

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
