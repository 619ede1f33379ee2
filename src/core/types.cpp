#include "fabricbench/core/types.hpp"

#include <array>
#include <utility>

namespace fb {
namespace {

constexpr std::array kOps{
    std::pair{Op::all_reduce, "all_reduce"}, std::pair{Op::all_gather, "all_gather"},
    std::pair{Op::reduce_scatter, "reduce_scatter"}, std::pair{Op::broadcast, "broadcast"},
    std::pair{Op::reduce, "reduce"}, std::pair{Op::alltoall, "alltoall"},
    std::pair{Op::sendrecv, "sendrecv"}, std::pair{Op::pingpong, "pingpong"},
    std::pair{Op::unidir, "unidir"}, std::pair{Op::bidir, "bidir"},
    std::pair{Op::copy_d2d_ce, "copy_d2d_ce"}, std::pair{Op::copy_d2d_sm, "copy_d2d_sm"},
    std::pair{Op::copy_h2d_pinned, "copy_h2d_pinned"}, std::pair{Op::copy_d2h_pinned, "copy_d2h_pinned"},
    std::pair{Op::copy_h2d_pageable, "copy_h2d_pageable"}, std::pair{Op::copy_d2h_pageable, "copy_d2h_pageable"},
    std::pair{Op::copy_bidir_pinned, "copy_bidir_pinned"}, std::pair{Op::copy_peer, "copy_peer"},
    std::pair{Op::copy_peer_staged, "copy_peer_staged"}, std::pair{Op::kernel_launch, "kernel_launch"},
};

struct DtypeInfo {
  Dtype dtype;
  const char* name;
  std::size_t bytes;
};
constexpr std::array kDtypes{
    DtypeInfo{Dtype::int8, "int8", 1},       DtypeInfo{Dtype::uint8, "uint8", 1},
    DtypeInfo{Dtype::int32, "int32", 4},     DtypeInfo{Dtype::uint32, "uint32", 4},
    DtypeInfo{Dtype::int64, "int64", 8},     DtypeInfo{Dtype::uint64, "uint64", 8},
    DtypeInfo{Dtype::half, "half", 2},       DtypeInfo{Dtype::float32, "float", 4},
    DtypeInfo{Dtype::float64, "double", 8},  DtypeInfo{Dtype::bfloat16, "bfloat16", 2},
    DtypeInfo{Dtype::fp8_e4m3, "f8e4m3", 1}, DtypeInfo{Dtype::fp8_e5m2, "f8e5m2", 1},
};
constexpr std::array<std::pair<const char*, Dtype>, 8> kDtypeAliases{{
    {"float32", Dtype::float32}, {"fp32", Dtype::float32}, {"float16", Dtype::half},
    {"fp16", Dtype::half},       {"float64", Dtype::float64}, {"fp64", Dtype::float64},
    {"bf16", Dtype::bfloat16},   {"char", Dtype::int8},
}};

constexpr std::array kRedops{
    std::pair{RedOp::sum, "sum"}, std::pair{RedOp::prod, "prod"}, std::pair{RedOp::max, "max"},
    std::pair{RedOp::min, "min"}, std::pair{RedOp::avg, "avg"},
};

constexpr std::array kAllOps{Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::broadcast, Op::reduce,
                             Op::alltoall,   Op::sendrecv,   Op::pingpong,       Op::unidir,    Op::bidir};
constexpr std::array kDefaultOps{Op::all_reduce, Op::all_gather, Op::reduce_scatter,
                                 Op::broadcast,  Op::alltoall,   Op::sendrecv};
constexpr std::array kCopyOps{Op::copy_d2d_ce,       Op::copy_d2d_sm,       Op::copy_h2d_pinned,
                              Op::copy_d2h_pinned,   Op::copy_h2d_pageable, Op::copy_d2h_pageable,
                              Op::copy_bidir_pinned, Op::copy_peer,         Op::copy_peer_staged,
                              Op::kernel_launch};
constexpr std::array kAllDtypes{Dtype::int8,  Dtype::uint8,   Dtype::int32,   Dtype::uint32,
                                Dtype::int64, Dtype::uint64,  Dtype::half,    Dtype::float32,
                                Dtype::float64, Dtype::bfloat16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
constexpr std::array kAllRedops{RedOp::sum, RedOp::prod, RedOp::max, RedOp::min, RedOp::avg};

template <typename Table>
std::string join_names(const Table& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    if constexpr (requires { entry.name; }) {
      out += entry.name;
    } else {
      out += entry.second;
    }
  }
  return out;
}

}  // namespace

std::span<const Op> all_ops() { return kAllOps; }
std::span<const Op> default_ops() { return kDefaultOps; }
std::span<const Op> copy_ops() { return kCopyOps; }
std::span<const Dtype> all_dtypes() { return kAllDtypes; }
std::span<const RedOp> all_redops() { return kAllRedops; }

std::string_view name(Op op) {
  for (const auto& [o, n] : kOps)
    if (o == op) return n;
  return "?";
}
std::string_view name(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}
std::string_view name(RedOp redop) {
  for (const auto& [r, n] : kRedops)
    if (r == redop) return n;
  return "?";
}

std::optional<Op> parse_op(std::string_view text) {
  for (const auto& [o, n] : kOps)
    if (text == n) return o;
  // nccl-tests binary names (all_reduce_perf) and the common spellings without '_'.
  if (text == "allreduce") return Op::all_reduce;
  if (text == "allgather") return Op::all_gather;
  if (text == "reducescatter") return Op::reduce_scatter;
  if (text == "bcast") return Op::broadcast;
  if (text == "all_to_all") return Op::alltoall;
  return std::nullopt;
}

std::optional<Dtype> parse_dtype(std::string_view text) {
  for (const auto& d : kDtypes)
    if (text == d.name) return d.dtype;
  for (const auto& [alias, d] : kDtypeAliases)
    if (text == alias) return d;
  return std::nullopt;
}

std::optional<RedOp> parse_redop(std::string_view text) {
  for (const auto& [r, n] : kRedops)
    if (text == n) return r;
  return std::nullopt;
}

std::size_t dtype_bytes(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.bytes;
  return 0;
}

bool is_reduction(Op op) { return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce; }
bool has_root(Op op) { return op == Op::broadcast || op == Op::reduce; }
bool is_pair_op(Op op) {
  return op == Op::pingpong || op == Op::unidir || op == Op::bidir || op == Op::copy_peer || op == Op::copy_peer_staged;
}
bool is_copy_op(Op op) {
  for (Op c : kCopyOps)
    if (c == op) return true;
  return false;
}
bool has_in_place(Op op) { return !is_pair_op(op) && !is_copy_op(op); }

std::string allowed_ops() { return join_names(kOps); }
std::string allowed_dtypes() { return join_names(kDtypes); }
std::string allowed_redops() { return join_names(kRedops); }

}  // namespace fb
