#include "nccl_types.hpp"

#include <fmt/format.h>

namespace fb::nccl {

std::optional<ncclDataType_t> datatype(Dtype dtype) {
  switch (dtype) {
    case Dtype::int8:
      return ncclInt8;
    case Dtype::uint8:
      return ncclUint8;
    case Dtype::int32:
      return ncclInt32;
    case Dtype::uint32:
      return ncclUint32;
    case Dtype::int64:
      return ncclInt64;
    case Dtype::uint64:
      return ncclUint64;
    case Dtype::half:
      return ncclFloat16;
    case Dtype::float32:
      return ncclFloat32;
    case Dtype::float64:
      return ncclFloat64;
    case Dtype::bfloat16:
      return ncclBfloat16;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case Dtype::fp8_e4m3:
      return ncclFloat8e4m3;
    case Dtype::fp8_e5m2:
      return ncclFloat8e5m2;
#else
    case Dtype::fp8_e4m3:  // fp8 arrived in NCCL 2.24
    case Dtype::fp8_e5m2:
      return std::nullopt;
#endif
  }
  return std::nullopt;
}

ncclRedOp_t reduction(RedOp redop) {
  switch (redop) {
    case RedOp::sum:
      return ncclSum;
    case RedOp::prod:
      return ncclProd;
    case RedOp::max:
      return ncclMax;
    case RedOp::min:
      return ncclMin;
    case RedOp::avg:
      return ncclAvg;
  }
  return ncclSum;
}

std::string version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "unknown";
  // Since NCCL 2.9 the code is major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

}  // namespace fb::nccl
