// The vocabulary of a measurement: which operation, on which datatype, with
// which reduction. Names match nccl-tests so its users' habits carry over.
// What each op is (flags, layout, busbw, check, model) is a row of the op
// table, op_desc.hpp: a new enumerator needs its row there.
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
  gather,    // rooted: every rank's block to the root
  scatter,   // rooted: the root's blocks, one to each rank
  sendrecv,  // ring: rank r sends to r+1 and receives from r-1
  pingpong,  // point-to-point latency between two ranks (half round trip)
  unidir,    // point-to-point bandwidth, one direction, a window of messages
  bidir,     // point-to-point bandwidth, both directions at once
  // Copy paths inside a node (the cuda backend), per rank on its own GPU.
  // Sizes are the bytes copied; algbw counts them once (as nvbandwidth does
  // for a device-local copy, which reads and writes each byte).
  copy_d2d_ce,        // device-local copy by the copy engine (cudaMemcpyAsync)
  copy_d2d_sm,        // device-local copy by an SM kernel
  copy_h2d_pinned,    // host -> device from pinned host memory (copy engine)
  copy_d2h_pinned,    // device -> host into pinned host memory
  copy_h2d_pageable,  // host -> device from pageable memory (staged by the driver)
  copy_d2h_pageable,  // device -> host into pageable memory
  copy_bidir_pinned,  // host -> device and device -> host at once; algbw per direction
  copy_peer,          // device -> another local GPU, peer access on (NVLink or PCIe P2P)
  copy_peer_staged,   // the same with peer access off: the driver stages the copy
  kernel_launch,      // back-to-back launches of an empty kernel (the size is not used)
};

enum class Dtype { int8, uint8, int32, uint32, int64, uint64, half, float32, float64, bfloat16, fp8_e4m3, fp8_e5m2 };

enum class RedOp { sum, prod, max, min, avg };

std::span<const Op> all_ops();      // every communication op (collectives and point-to-point)
std::span<const Op> default_ops();  // the six collectives of a default sweep
std::span<const Op> copy_ops();     // every copy path of the cuda backend, in sweep order
std::span<const Dtype> all_dtypes();
std::span<const RedOp> all_redops();

std::string_view name(Op op);
std::string_view name(Dtype dtype);
std::string_view name(RedOp redop);

std::optional<Op> parse_op(std::string_view text);
std::optional<Dtype> parse_dtype(std::string_view text);  // nccl-tests names and common aliases
std::optional<RedOp> parse_redop(std::string_view text);

std::size_t dtype_bytes(Dtype dtype);
// The op table's flags (op_desc.hpp), for code that needs only one.
bool is_reduction(Op op);     // takes a reduction operator
bool has_root(Op op);         // broadcast, reduce, gather, scatter
bool is_pair_op(Op op);       // pingpong, unidir, bidir, copy_peer*: two ranks only
bool is_copy_op(Op op);       // the copy paths and kernel_launch
bool has_in_place(Op op);     // collectives and sendrecv; not point-to-point or copies

// "all_reduce, all_gather, ..." for error messages that list what is allowed.
std::string allowed_ops();
std::string allowed_dtypes();
std::string allowed_redops();

}  // namespace fb
