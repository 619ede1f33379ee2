// Which transport MPI traffic of a group takes. Open MPI does not report the
// transport it picked per peer, so this reads what its configuration allows
// (the pml and btl control variables, through MPI_T) and where the peers sit:
// "shm" inside a node, "tcp", "ucx" or "net" (a network transport MPI may
// choose among several) between nodes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/comm.hpp"

namespace fb {

std::string mpi_path(const Comm& group);

// Pure part, for tests: is component `name` allowed by an MCA selection list
// such as "self,tcp" or "^uct,openib"? An empty list allows everything.
bool mca_allows(std::string_view list, std::string_view name);
std::string classify_mpi_path(bool same_node, std::string_view pml, std::string_view btl);

// Where Open MPI takes an MCA variable's value, highest precedence first:
// OMPI_MCA_<name> in the environment (mpirun's --mca and srun's environment
// arrive there), then the parameter files, the user's
// ($HOME/.openmpi/mca-params.conf) before the system's
// (<sysconfdir>/openmpi-mca-params.conf; sysconfdir as the build's
// ompi_info gave it). Open MPI's documentation: "Setting MCA parameters".
struct McaSources {
  std::function<const char*(const char*)> env;
  std::function<std::string(const std::string&)> read;  // a file's text, "" when absent
  std::vector<std::string> files;                        // highest precedence first
};
McaSources process_mca_sources();

// `name`'s value from those sources ("" when none sets it), or nullopt when
// only MPI_T can tell: other parameter files or prefixes named in the
// environment, a relocated install, or no known sysconfdir (not Open MPI).
std::optional<std::string> mca_value_without_mpit(std::string_view name, const McaSources& sources);
// The value a parameter file's `name = value` lines give (the last wins); nullopt when none.
std::optional<std::string> mca_file_value(std::string_view text, std::string_view name);
// The string control variable `name` through MPI_T: 0.2 s a call (Open MPI 4.1), so only where the
// sources above cannot tell, and as the reference the tests hold them to; "" when absent.
[[nodiscard]] std::string mpit_cvar(const char* name);

}  // namespace fb
