#include "mpi_types.hpp"

namespace fb::mpi {

MPI_Datatype datatype(Dtype dtype) {
  switch (dtype) {
    case Dtype::int8:
      return MPI_INT8_T;
    case Dtype::uint8:
      return MPI_UINT8_T;
    case Dtype::int32:
      return MPI_INT32_T;
    case Dtype::uint32:
      return MPI_UINT32_T;
    case Dtype::int64:
      return MPI_INT64_T;
    case Dtype::uint64:
      return MPI_UINT64_T;
    case Dtype::float32:
      return MPI_FLOAT;
    case Dtype::float64:
      return MPI_DOUBLE;
    case Dtype::half:  // MPI has no 16- or 8-bit floating-point datatypes
    case Dtype::bfloat16:
    case Dtype::fp8_e4m3:
    case Dtype::fp8_e5m2:
      return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op reduction(RedOp redop) {
  switch (redop) {
    case RedOp::sum:
      return MPI_SUM;
    case RedOp::prod:
      return MPI_PROD;
    case RedOp::max:
      return MPI_MAX;
    case RedOp::min:
      return MPI_MIN;
    case RedOp::avg:  // no MPI_Op computes a mean
      return MPI_OP_NULL;
  }
  return MPI_OP_NULL;
}

}  // namespace fb::mpi
