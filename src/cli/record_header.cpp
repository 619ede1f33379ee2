#include "record_header.hpp"

#include <ctime>
#include <string>
#include <vector>

#include "build_identity.hpp"
#include "fabricbench/version.hpp"

namespace fb::cli {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string shared_run_id(const Comm& world) {
  return world.bcast_string_quiet(world.rank() == 0 ? make_run_id() : std::string(), 0);
}

RunHeader record_header(std::string_view command, int argc, char** argv, const Comm& world, const NodeMap& nodes,
                        std::string run_id) {
  RunHeader h;
  h.command = command;
  h.version = kVersion;
  h.argv.assign(argv, argv + argc);
  h.start_time = utc_now();
  h.run_id = std::move(run_id);
  h.ranks = world.size();
  h.nodes = nodes.nodes;
  h.hosts = nodes.node_hosts;
  h.ranks_per_node.assign(static_cast<std::size_t>(nodes.nodes), 0);
  for (int n : nodes.rank_node) ++h.ranks_per_node[static_cast<std::size_t>(n)];
  h.rank_node = nodes.rank_node;
  h.mpi_library = MpiSession::library_version();
  h.mpi_thread_level = MpiSession::thread_level();
  h.build = build_identity();
  return h;
}

void name_backend(RunHeader& header, const Backend& backend) {
  header.backend = backend.name();
  header.backend_version = backend.version();
  header.simulated = backend.simulated();
}

}  // namespace fb::cli
