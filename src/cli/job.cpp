#include "job.hpp"

#include <ctime>
#include <vector>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/version.hpp"

namespace fb::cli {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::ordered_json record_header(std::string_view command, int argc, char** argv, const Comm& world,
                                     const NodeMap& nodes, const Backend& backend) {
  std::vector<std::string> args(argv, argv + argc);
  std::vector<int> ranks_per_node(static_cast<std::size_t>(nodes.nodes), 0);
  for (int n : nodes.rank_node) ++ranks_per_node[static_cast<std::size_t>(n)];
  return {
      {"type", "run"},
      {"schema_version", schema_version()},
      {"command", command},
      {"version", kVersion},
      {"argv", args},
      {"start_time", utc_now()},
      {"ranks", world.size()},
      {"nodes", nodes.nodes},
      {"hosts", nodes.node_hosts},
      {"ranks_per_node", ranks_per_node},
      {"rank_node", nodes.rank_node},
      {"backend", backend.name()},
      {"backend_version", backend.version()},
      {"mpi_library", MpiSession::library_version()},
  };
}

int run_or_abort(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitRunError);
    return kExitRunError;
  }
}

}  // namespace fb::cli
