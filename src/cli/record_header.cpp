#include "record_header.hpp"

#include <ctime>
#include <string>
#include <vector>

#include "build_identity.hpp"
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
                                     const NodeMap& nodes) {
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
      {"mpi_library", MpiSession::library_version()},
      {"build", build_identity()},
  };
}

}  // namespace fb::cli
