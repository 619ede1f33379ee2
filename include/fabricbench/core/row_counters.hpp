// Error counters around each measured row (issue 36): the engine asks a
// node's leader for a snapshot before and after each row, outside the timed
// loop, and records the counters that moved. The engine knows no sysfs;
// topo's reader (topo/counters.hpp) is the one implementation outside tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

// One counter that moved during a row, or whose change cannot be told.
struct CounterMove {
  std::string device;       // "mlx5_0:1" (a port), "eth0" (an interface), "0000:17:00.0" (a PCI function), "node"
  std::string device_kind;  // port, interface, pci (a NIC's function), node (node-wide: every process's
                            // traffic counts), gpu (a GPU: NVML's counters and its function's AER)
  std::string counter;      // "symbol_error", "tcp_retrans_segs", ...
  std::optional<std::uint64_t> delta;  // nullopt: unknown, and unknown_reason says why
  std::string unknown_reason;
};

class RowCounters {
 public:
  virtual ~RowCounters() = default;
  // The snapshot before a row.
  virtual void before() = 0;
  // The snapshot after it, against the one before: only the counters that
  // moved or whose change is unknown (saturated, reset, unreadable).
  [[nodiscard]] virtual std::vector<CounterMove> after() = 0;
  // Counters each snapshot reads (for the cost line in the debug log).
  virtual std::size_t size() const = 0;
};

struct CounterLine;
class Comm;
struct NodeMap;

// What a row's traffic went through, for telling a counter that moved on a
// device the row used from one that moved beside it (a NIC's errors during
// an intra row came from some other traffic or from the link alone).
struct RowReach {
  bool left_node = false;  // its ranks spanned nodes: the network's ports, interfaces, NIC functions, TCP
  bool on_gpus = false;    // its buffers were in GPU memory: the node's GPUs
};
// Did a row of that reach use a device of `device_kind`? Only the kinds of
// the network and of GPUs are known; any other kind is taken as used, so a
// counter is never dismissed for a kind this code has not met.
bool row_uses(const RowReach& reach, std::string_view device_kind);

// Collective on `world`, after each node's leader took its snapshot after a
// row (`mine`: its moves; other ranks pass none): every leader's moves as
// counter lines on rank 0, their node, host, device, counter, delta and
// `exercised` (row_uses of `reach`) set (the row's own keys are the
// caller's); empty on other ranks. One
// allreduce when no leader's counters moved, the usual case; a gather only
// when one did.
std::vector<CounterLine> gather_counter_moves(const Comm& world, const NodeMap& nodes,
                                              const std::vector<CounterMove>& mine, const RowReach& reach);

// A leader's moves as one text for the per-row gather, and back. Fields
// are tab-separated and lines newline-ended; those characters in a reason
// become spaces.
std::string encode_moves(const std::vector<CounterMove>& moves);
std::vector<CounterMove> decode_moves(const std::string& text);

}  // namespace fb
