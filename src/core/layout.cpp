#include "fabricbench/core/layout.hpp"

#include "fabricbench/core/op_desc.hpp"

namespace fb {

Layout layout_for(Op op, Dtype dtype, std::uint64_t requested_bytes, int nranks) {
  const std::uint64_t word = dtype_bytes(dtype);
  const std::uint64_t n = nranks > 0 ? static_cast<std::uint64_t>(nranks) : 1;
  Layout l;
  switch (op_desc(op).layout) {
    case LayoutRule::same:
      l.block = requested_bytes / word;
      l.in_elems = l.out_elems = l.count = l.block;
      break;
    case LayoutRule::gathers:
      l.block = requested_bytes / (word * n);
      l.in_elems = l.block;
      l.out_elems = l.count = l.block * n;
      break;
    case LayoutRule::scatters:
      l.block = requested_bytes / (word * n);
      l.in_elems = l.count = l.block * n;
      l.out_elems = l.block;
      break;
    case LayoutRule::exchanges:
      l.block = requested_bytes / (word * n);
      l.in_elems = l.out_elems = l.count = l.block * n;
      break;
  }
  l.bytes = l.count * word;
  return l;
}

double algbw_gbps(Op op, std::uint64_t bytes, double time_us) {
  if (!(time_us > 0.0)) return 0.0;
  const double moved = static_cast<double>(bytes) * op_desc(op).directions;
  return moved / (time_us * 1e3);
}

double busbw_factor(Op op, int nranks) {
  const double n = nranks > 0 ? nranks : 1;
  switch (op_desc(op).busbw) {
    case BusbwRule::one:
      return 1.0;
    case BusbwRule::ring:
      return (n - 1.0) / n;
    case BusbwRule::all_reduce:
      return 2.0 * (n - 1.0) / n;
  }
  return 1.0;  // not reached: the switch covers every rule
}

}  // namespace fb
