#include "fabricbench/core/layout.hpp"

namespace fb {

Layout layout_for(Op op, Dtype dtype, std::uint64_t requested_bytes, int nranks) {
  const std::uint64_t word = dtype_bytes(dtype);
  const std::uint64_t n = nranks > 0 ? static_cast<std::uint64_t>(nranks) : 1;
  Layout l;
  switch (op) {
    case Op::all_gather:
      l.block = requested_bytes / (word * n);
      l.in_elems = l.block;
      l.out_elems = l.block * n;
      l.count = l.out_elems;
      break;
    case Op::reduce_scatter:
      l.block = requested_bytes / (word * n);
      l.in_elems = l.block * n;
      l.out_elems = l.block;
      l.count = l.in_elems;
      break;
    case Op::alltoall:
      l.block = requested_bytes / (word * n);
      l.in_elems = l.block * n;
      l.out_elems = l.block * n;
      l.count = l.in_elems;
      break;
    default:
      l.block = requested_bytes / word;
      l.in_elems = l.block;
      l.out_elems = l.block;
      l.count = l.block;
      break;
  }
  l.bytes = l.count * word;
  return l;
}

double algbw_gbps(Op op, std::uint64_t bytes, double time_us) {
  if (!(time_us > 0.0)) return 0.0;
  const double moved = static_cast<double>(bytes) * (op == Op::bidir ? 2.0 : 1.0);
  return moved / (time_us * 1e3);
}

double busbw_factor(Op op, int nranks) {
  const double n = nranks > 0 ? nranks : 1;
  switch (op) {
    case Op::all_reduce:
      return 2.0 * (n - 1.0) / n;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::alltoall:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

}  // namespace fb
