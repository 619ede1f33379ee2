// The vocabulary of a measurement: which operation, on which datatype, with
// which reduction. Names match nccl-tests so its users' habits carry over.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fb {

enum class Op {
  all_reduce,
  all_gather,
  reduce_scatter,
  broadcast,
  reduce,
  alltoall,
  sendrecv,  // ring: rank r sends to r+1 and receives from r-1
  pingpong,  // point-to-point latency between two ranks (half round trip)
  unidir,    // point-to-point bandwidth, one direction, a window of messages
  bidir,     // point-to-point bandwidth, both directions at once
};

enum class Dtype { int8, uint8, int32, uint32, int64, uint64, half, float32, float64, bfloat16, fp8_e4m3, fp8_e5m2 };

enum class RedOp { sum, prod, max, min, avg };

std::span<const Op> all_ops();
std::span<const Op> default_ops();  // the six collectives of a default sweep
std::span<const Dtype> all_dtypes();
std::span<const RedOp> all_redops();

std::string_view name(Op op);
std::string_view name(Dtype dtype);
std::string_view name(RedOp redop);

std::optional<Op> parse_op(std::string_view text);
std::optional<Dtype> parse_dtype(std::string_view text);  // nccl-tests names and common aliases
std::optional<RedOp> parse_redop(std::string_view text);

std::size_t dtype_bytes(Dtype dtype);
bool is_reduction(Op op);     // takes a reduction operator
bool has_root(Op op);         // broadcast, reduce
bool is_pair_op(Op op);       // pingpong, unidir, bidir: two ranks only

// "all_reduce, all_gather, ..." for error messages that list what is allowed.
std::string allowed_ops();
std::string allowed_dtypes();
std::string allowed_redops();

}  // namespace fb
