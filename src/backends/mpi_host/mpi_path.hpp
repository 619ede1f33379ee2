// Which transport MPI traffic of a group takes. Open MPI does not report the
// transport it picked per peer, so this reads what its configuration allows
// (the pml and btl control variables, through MPI_T) and where the peers sit:
// "shm" inside a node, "tcp", "ucx" or "net" (a network transport MPI may
// choose among several) between nodes.
#pragma once

#include <string>
#include <string_view>

#include "fabricbench/core/comm.hpp"

namespace fb {

std::string mpi_path(const Comm& group);

// Pure part, for tests: is component `name` allowed by an MCA selection list
// such as "self,tcp" or "^uct,openib"? An empty list allows everything.
bool mca_allows(std::string_view list, std::string_view name);
std::string classify_mpi_path(bool same_node, std::string_view pml, std::string_view btl);

}  // namespace fb
