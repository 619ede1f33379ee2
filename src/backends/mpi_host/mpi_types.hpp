// Mapping of fabricbench datatypes and reductions onto MPI's, shared by the
// host and the device-buffer MPI backends.
#pragma once

#include <mpi.h>

#include "fabricbench/core/types.hpp"

namespace fb::mpi {

// MPI_DATATYPE_NULL when MPI has no such type (half, bfloat16, fp8).
MPI_Datatype datatype(Dtype dtype);
// MPI_OP_NULL when MPI has no such reduction (avg).
MPI_Op reduction(RedOp redop);

}  // namespace fb::mpi
