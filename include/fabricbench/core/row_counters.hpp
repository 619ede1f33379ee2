// Error counters around each measured row (issue 36): the engine asks a
// node's leader for a snapshot before and after each row, outside the timed
// loop, and records the counters that moved. The engine knows no sysfs;
// topo's reader (topo/counters.hpp) is the one implementation outside tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fb {

// One counter that moved during a row, or whose change cannot be told.
struct CounterMove {
  std::string device;       // "mlx5_0:1" (a port), "eth0" (an interface), "0000:17:00.0" (a PCI function), "node"
  std::string device_kind;  // port, interface, pci, node (node-wide: every process's traffic counts)
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

// Collective on `world`, after each node's leader took its snapshot after a
// row (`mine`: its moves; other ranks pass none): every leader's moves as
// counter lines on rank 0, their node, host, device, counter and delta set
// (the row's own keys are the caller's); empty on other ranks. One
// allreduce when no leader's counters moved, the usual case; a gather only
// when one did.
std::vector<CounterLine> gather_counter_moves(const Comm& world, const NodeMap& nodes,
                                              const std::vector<CounterMove>& mine);

// A leader's moves as one text for the per-row gather, and back. Fields
// are tab-separated and lines newline-ended; those characters in a reason
// become spaces.
std::string encode_moves(const std::vector<CounterMove>& moves);
std::vector<CounterMove> decode_moves(const std::string& text);

}  // namespace fb
