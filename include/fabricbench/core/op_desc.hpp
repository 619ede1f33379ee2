// Every op as data: one row per enumerator of fb::Op saying what the engine,
// the check, the record and the model need to know of it. Code that has to
// know something about an op reads its row instead of switching on the op, so
// adding an op is one row here plus one case in each backend that runs it
// (docs/architecture.md, "How to add an op"). src/core/op_desc.cpp checks at
// compile time that the table covers the enum exactly, entry i describing Op i.
//
// Conventions follow nccl-tests (src/*.cu of github.com/NVIDIA/nccl-tests:
// each op's GetCollByteCount and GetBw) so figures compare one to one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fabricbench/core/types.hpp"

namespace fb {

// How a requested size becomes buffers (`block` = elements per rank-block;
// the size is rounded down to whole blocks, as nccl-tests does).
enum class LayoutRule : std::uint8_t {
  same,       // in = out = size: the per-rank buffer (all_reduce, broadcast, sendrecv, p2p, copies)
  gathers,    // size is the gathered buffer: in = 1 block, out = n blocks (all_gather, gather)
  scatters,   // size is the scattered buffer: in = n blocks, out = 1 block (reduce_scatter, scatter)
  exchanges,  // in = out = n blocks (alltoall)
};

// busbw = algbw x factor (nccl-tests' GetBw): the figure that tends to the
// link's bandwidth whatever the rank count.
enum class BusbwRule : std::uint8_t {
  one,         // broadcast, reduce, sendrecv, point-to-point, copies
  ring,        // (n-1)/n: all_gather, reduce_scatter, alltoall, gather, scatter
  all_reduce,  // 2(n-1)/n
};

// What output element j of rank r must hold (check_values.hpp computes it;
// "element i of rank q" is q's input pattern at i).
enum class ExpectRule : std::uint8_t {
  reduced,           // the reduction over all ranks of element j (all_reduce)
  reduced_at_root,   // the same, on the root only (reduce)
  reduced_block,     // the reduction of element r*block + j (reduce_scatter)
  gathered,          // element j%block of rank j/block (all_gather)
  gathered_at_root,  // the same, on the root only (gather)
  transposed,        // element r*block + j%block of rank j/block (alltoall)
  from_root,         // element j of the root (broadcast)
  scattered,         // element r*block + j of the root, whose input alone is sent (scatter)
  from_prev,         // element j of rank r-1 (sendrecv's ring)
  from_source,       // element j of the peer it receives from (point-to-point)
  own,               // this rank's own element j (copies)
};

// The model's latency term: sequential message hops of the algorithm on n ranks.
enum class StepsRule : std::uint8_t {
  one,          // a single hop whatever n (sendrecv, point-to-point, copies)
  ring,         // n-1 (0 on one rank): ring all_gather/reduce_scatter/alltoall, linear gather/scatter
  double_ring,  // 2(n-1): ring all_reduce = reduce_scatter + all_gather
  chain,        // n: a pipelined chain through every rank (NCCL's broadcast and reduce rings)
};

// The model's bandwidth term: bytes each rank sends per direction.
enum class WireRule : std::uint8_t {
  message,  // the message itself, whatever n
  bus,      // busbw factor x size (0 on one rank): the definition of busbw
};

// What the check needs of the op, small and trivially copyable: the GPU
// backends hand it to their kernels inside the CheckContext.
struct OpCheck {
  ExpectRule expect = ExpectRule::reduced;
  bool reduces = true;  // outputs combine inputs with the reduction operator
};

struct OpDesc {
  Op op;
  std::string_view name;                       // the record's and the CLI's name (nccl-tests' spelling)
  std::array<std::string_view, 2> aliases{};   // also accepted by parse_op
  bool reduces = false;        // takes a reduction operator (-o)
  bool rooted = false;         // takes a root (-r)
  bool pair = false;           // two ranks only (--peers)
  bool copy = false;           // a copy path inside a node, or a kernel launch (the cuda backend)
  bool in_place = false;       // has an in-place variant
  bool default_sweep = false;  // one of the six collectives a sweep runs without --ops
  // Each iteration ends on a reply to what it sent (a ping-pong's pong; unidir
  // and bidir end on a zero-byte reply), so both ranks end it in step: the
  // host times such iterations alone, not in groups (timing_groups.hpp).
  bool answered = false;
  // Each iteration is a round trip that peer_a starts and ends, on every
  // backend (a ping-pong): peer_a's clock times it (timing.hpp,
  // TimingPlan::times_count). Not unidir: its window ends on a reply on the
  // MPI backends, but NCCL's sender may complete before its receiver; not
  // bidir, where both ranks send.
  bool round_trip = false;
  LayoutRule layout = LayoutRule::same;
  BusbwRule busbw = BusbwRule::one;
  int directions = 1;          // algbw counts the bytes this many times (bidir: both ways)
  ExpectRule expect = ExpectRule::own;
  StepsRule steps = StepsRule::one;
  WireRule wire = WireRule::message;

  constexpr OpCheck check() const { return {expect, reduces}; }
};

// One row per enumerator, in the enum's order.
inline constexpr std::array kOpTable{
    OpDesc{.op = Op::all_reduce,
           .name = "all_reduce",
           .aliases = {"allreduce"},
           .reduces = true,
           .in_place = true,
           .default_sweep = true,
           .busbw = BusbwRule::all_reduce,
           .expect = ExpectRule::reduced,
           .steps = StepsRule::double_ring,
           .wire = WireRule::bus},
    OpDesc{.op = Op::all_gather,
           .name = "all_gather",
           .aliases = {"allgather"},
           .in_place = true,
           .default_sweep = true,
           .layout = LayoutRule::gathers,
           .busbw = BusbwRule::ring,
           .expect = ExpectRule::gathered,
           .steps = StepsRule::ring,
           .wire = WireRule::bus},
    OpDesc{.op = Op::reduce_scatter,
           .name = "reduce_scatter",
           .aliases = {"reducescatter"},
           .reduces = true,
           .in_place = true,
           .default_sweep = true,
           .layout = LayoutRule::scatters,
           .busbw = BusbwRule::ring,
           .expect = ExpectRule::reduced_block,
           .steps = StepsRule::ring,
           .wire = WireRule::bus},
    OpDesc{.op = Op::broadcast,
           .name = "broadcast",
           .aliases = {"bcast"},
           .rooted = true,
           .in_place = true,
           .default_sweep = true,
           .expect = ExpectRule::from_root,
           .steps = StepsRule::chain,
           .wire = WireRule::bus},
    OpDesc{.op = Op::reduce,
           .name = "reduce",
           .reduces = true,
           .rooted = true,
           .in_place = true,
           .expect = ExpectRule::reduced_at_root,
           .steps = StepsRule::chain,
           .wire = WireRule::bus},
    OpDesc{.op = Op::alltoall,
           .name = "alltoall",
           .aliases = {"all_to_all"},
           .in_place = true,
           .default_sweep = true,
           .layout = LayoutRule::exchanges,
           .busbw = BusbwRule::ring,
           .expect = ExpectRule::transposed,
           .steps = StepsRule::ring,
           .wire = WireRule::bus},
    // nccl-tests gather.cu / scatter.cu: the size is the root's whole buffer
    // (n blocks), busbw factor (n-1)/n; in-place at the root (MPI_IN_PLACE).
    OpDesc{.op = Op::gather,
           .name = "gather",
           .rooted = true,
           .in_place = true,
           .layout = LayoutRule::gathers,
           .busbw = BusbwRule::ring,
           .expect = ExpectRule::gathered_at_root,
           .steps = StepsRule::ring,
           .wire = WireRule::bus},
    OpDesc{.op = Op::scatter,
           .name = "scatter",
           .rooted = true,
           .in_place = true,
           .layout = LayoutRule::scatters,
           .busbw = BusbwRule::ring,
           .expect = ExpectRule::scattered,
           .steps = StepsRule::ring,
           .wire = WireRule::bus},
    OpDesc{.op = Op::sendrecv,
           .name = "sendrecv",
           .in_place = true,
           .default_sweep = true,
           .expect = ExpectRule::from_prev},
    OpDesc{.op = Op::pingpong,
           .name = "pingpong",
           .pair = true,
           .answered = true,
           .round_trip = true,
           .expect = ExpectRule::from_source},
    OpDesc{.op = Op::unidir, .name = "unidir", .pair = true, .answered = true, .expect = ExpectRule::from_source},
    OpDesc{.op = Op::bidir,
           .name = "bidir",
           .pair = true,
           .answered = true,
           .directions = 2,
           .expect = ExpectRule::from_source},
    OpDesc{.op = Op::copy_d2d_ce, .name = "copy_d2d_ce", .copy = true},
    OpDesc{.op = Op::copy_d2d_sm, .name = "copy_d2d_sm", .copy = true},
    OpDesc{.op = Op::copy_h2d_pinned, .name = "copy_h2d_pinned", .copy = true},
    OpDesc{.op = Op::copy_d2h_pinned, .name = "copy_d2h_pinned", .copy = true},
    OpDesc{.op = Op::copy_h2d_pageable, .name = "copy_h2d_pageable", .copy = true},
    OpDesc{.op = Op::copy_d2h_pageable, .name = "copy_d2h_pageable", .copy = true},
    OpDesc{.op = Op::copy_bidir_pinned, .name = "copy_bidir_pinned", .copy = true},
    OpDesc{.op = Op::copy_peer, .name = "copy_peer", .pair = true, .copy = true},
    OpDesc{.op = Op::copy_peer_staged, .name = "copy_peer_staged", .pair = true, .copy = true},
    OpDesc{.op = Op::kernel_launch, .name = "kernel_launch", .copy = true},
};

inline constexpr std::size_t kOpCount = kOpTable.size();

constexpr const OpDesc& op_desc(Op op) { return kOpTable[static_cast<std::size_t>(op)]; }

// A set of ops, e.g. the ops a backend runs (Backend::ops).
class OpSet {
 public:
  constexpr OpSet() = default;
  constexpr bool has(Op op) const { return (bits_ >> static_cast<unsigned>(op)) & 1u; }
  constexpr OpSet& add(Op op) {
    bits_ |= std::uint64_t{1} << static_cast<unsigned>(op);
    return *this;
  }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(const OpSet&) const = default;
  // The ops whose row satisfies `pred(const OpDesc&)`, or whose op does (`pred(Op)`).
  template <typename Pred>
  static constexpr OpSet where(Pred pred) {
    OpSet s;
    for (const OpDesc& d : kOpTable) {
      if constexpr (requires { pred(d); }) {
        if (pred(d)) s.add(d.op);
      } else {
        if (pred(d.op)) s.add(d.op);
      }
    }
    return s;
  }
  // "all_reduce, all_gather, ..." in table order.
  std::string names() const;

 private:
  static_assert(kOpCount <= 64, "OpSet holds one bit per op in 64 bits");
  std::uint64_t bits_ = 0;
};

}  // namespace fb
