// Mapping of fabricbench datatypes and reductions onto MPI's, shared by the
// host and the device-buffer MPI backends.
#pragma once

#include <mpi.h>

#include <string>

#include "fabricbench/core/types.hpp"

namespace fb::mpi {

// MPI_DATATYPE_NULL when MPI has no such type (half, bfloat16, fp8).
MPI_Datatype datatype(Dtype dtype);
// MPI_OP_NULL when MPI has no such reduction (avg).
MPI_Op reduction(RedOp redop);

// "MPI_Allreduce failed on rank 3 (host n07): MPI_ERR_TRUNCATE: message truncated"
std::string error_text(const char* call, int code, MPI_Comm comm);

}  // namespace fb::mpi
