// Acceptance rules: what a profile demands of a run's results record. The
// YAML form of each kind is documented in docs/acceptance.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb::accept {

enum class RuleKind {
  absolute,     // a measured figure against a fixed bound: "min: 40 GB/s", "max: 10 us"
  spec,         // against the path's spec peak from the inventory: "min: 0.80 of spec"
  baseline,     // against the same row of an earlier run: "min: 0.95 of baseline"
  latency,      // a time figure at a small size: "max: 10 us"
  stability,    // coefficient of variation of iteration times: "max: 5%"
  correctness,  // zero wrong elements in checked rows
  uniformity,   // across inventory lines (heterogeneity) or across ranks (outliers)
  pairs,        // no node-pair link below a fraction of the median link
  storage,      // a `fabricbench storage` line's figure: "aggregate read >= 2 GB/s at 8 nodes"
  smoothness,   // no size whose time jumps above its neighbours' trend or whose busbw falls (accept/smoothness.hpp)
  mixed_gpus,   // one GPU model on every rank, unless the profile allows the mix
  transport,    // no NCCL row on TCP sockets while a node has an RDMA NIC up (NCCL fell back)
  shared_gpus,  // no GPU the ranks drive had another process on it, MIG, or compute prohibited
  environment,  // no NCCL/UCX/Open MPI setting that distorts the figures (core/environment_audit.hpp)
  bimodal,      // no row whose iteration times fall into two modes (core/modes.hpp)
  hardware,     // what was sold: the GPU model, GPUs and NICs per node, nodes, NVLink domain (inventory lines)
  counters,     // an error counter read around the rows: at most `max` per node and device (counters lines)
};

// The counters rule's figure per GB: a node's TCP retransmissions over the
// bytes the run's rows carried (accept/eval_counters.cpp).
inline constexpr std::string_view kTcpRetransmitsPerGb = "tcp_retransmits_per_gb";

// What a hardware rule checks: one promise of a quote each, so each has its verdict.
enum class HardwareItem { gpu, gpus_per_node, nics_per_node, nodes, nvlink_domain };

// A hardware rule's promise. `gpu`: every rank's GPU is one of `gpu_names`
// (NVML's names, whole, ignoring case); the others: at least `count` of them
// (nvlink_domain: every GPU of the run in a multi-node NVLink domain, the
// smallest of them holding at least `count` of the run's GPUs).
struct HardwarePromise {
  HardwareItem item = HardwareItem::gpu;
  std::vector<std::string> gpu_names;
  int count = 0;
  double nic_rate_gbit = 0;  // nics_per_node: NICs up at this rate or faster count
  // nics_per_node: topo's NIC kinds that count (IB, RoCE, EFA, Ethernet); empty = any
  std::vector<std::string> nic_kinds;
};

// The figure a row-based rule reads from a measurement line.
enum class Metric { busbw, algbw, time_us, time_min_us, time_mean_us, time_p99_us, time_max_us };

// The figure a storage rule reads from storage lines: the run's aggregate
// (all nodes' bytes over the slowest rank's time) or its slowest node's.
enum class StorageMetric { aggregate_gbps, node_min_gbps };

// Which storage lines a storage rule looks at. Empty / absent fields match all.
struct StorageFilter {
  std::string target = "path";       // path (--path, the shared filesystem) or local (--local)
  std::string pattern = "seq_read";  // seq_read, seq_write, small_read, small_write
  std::optional<int> nodes;          // nodes doing I/O at once; nullopt: the most the record measured
  std::string mode;                  // direct or buffered; "" = any
  std::optional<std::uint64_t> block_bytes;
};

// What a uniformity rule compares.
enum class Across { inventory, ranks };

// The figure a pairs rule reads from pair lines.
enum class PairMetric { unidir, bidir, latency };

// What a pairs rule judges: each link against the median link (or a floor),
// or each node, by the median of its links, against the median of the other
// nodes: a node with a slow port makes every one of its links slow, and only
// the node view blames it alone rather than both ends of each such link.
enum class PairsAcross { links, nodes };

enum class Bound { min, max };

// What a threshold's number is measured against.
enum class Reference {
  none,      // an absolute quantity in the metric's unit
  spec,      // a fraction of the spec peak
  baseline,  // a fraction of the baseline's figure
  median,    // a multiple of the median (ranks, pairs)
};

// What a threshold's number measures.
enum class Dimension { bandwidth, time, percent, relative };

// A parsed threshold. `value` is in base units: GB/s for bandwidth, us for
// time, a plain fraction for relative thresholds and percentages.
struct Limit {
  Bound bound = Bound::min;
  double value = 0;
  Dimension dimension = Dimension::bandwidth;
  Reference reference = Reference::none;  // set when dimension is relative
  std::string text;                       // as written in the profile, for messages
};

// Which measurement lines a rule looks at. Empty / absent fields match all.
struct RowFilter {
  std::string op;                      // "" = any op (correctness only)
  std::string scope;                   // "" = any scope (correctness only)
  std::optional<std::uint64_t> bytes;  // requested size; rows report it after rounding
  std::optional<bool> in_place;        // placement: out -> false, in -> true, any -> nullopt
  std::string dtype;                   // "" = any
};

struct Rule {
  std::string name;
  RuleKind kind = RuleKind::absolute;
  int line = 0;  // where the rule starts in the profile (1-based), for messages
  // May be skipped (not judged) without failing the check: `optional: true`.
  bool optional = false;
  RowFilter rows;
  Metric metric = Metric::busbw;
  std::vector<Limit> limits;  // min and/or max, as the kind allows
  // uniformity
  Across across = Across::ranks;
  std::vector<std::string> fields;  // inventory fields compared (empty = all)
  // pairs
  PairMetric pair_metric = PairMetric::unidir;
  PairsAcross pairs_across = PairsAcross::links;
  // storage
  StorageFilter storage;
  StorageMetric storage_metric = StorageMetric::aggregate_gbps;
  // smoothness: a factor over the neighbours' trend, a fraction busbw may fall (0 = not checked), the smallest size judged
  double max_jump = 0;
  double max_drop = 0;
  std::uint64_t from_bytes = 0;
  // mixed_gpus: the GPU models (as NVML names them, or a part of the name) a mixed partition may hold
  std::vector<std::string> allowed_gpus;
  // environment: the flags (core/environment_audit.hpp names) the profile accepts
  std::vector<std::string> allowed_env_flags;
  // hardware
  HardwarePromise hardware;
  // counters: a counter's name (topo/counters.hpp) or kTcpRetransmitsPerGb;
  // the most one node's device may count over the run; `informational`:
  // reported, never failed.
  std::string counter;
  double counter_max = 0;
  bool informational = false;
};

std::string_view name(RuleKind kind);
std::string_view name(Metric metric);
std::string_view name(PairMetric metric);
std::string_view name(PairsAcross across);
std::string_view name(StorageMetric metric);
std::optional<RuleKind> parse_rule_kind(std::string_view text);
std::optional<Metric> parse_metric(std::string_view text);
std::optional<PairMetric> parse_pair_metric(std::string_view text);
std::optional<PairsAcross> parse_pairs_across(std::string_view text);
std::optional<StorageMetric> parse_storage_metric(std::string_view text);
std::string allowed_rule_kinds();
std::string allowed_metrics();

bool is_time(Metric metric);
// The unit a metric's figures are shown in: "GB/s" or "us".
std::string_view unit_of(Metric metric);

// Inventory fields a uniformity rule can compare: the attributes of
// topo::fingerprint (gpus, gpu_memory, nvlink, driver, nic_rates, mtus, ...).
std::vector<std::string> inventory_fields();
std::string allowed_inventory_fields();
bool is_inventory_field(std::string_view field);

// Parses a threshold such as "40 GB/s", "320 Gbit/s", "10 us", "5%",
// "0.80 of spec", "0.95 of baseline", "1.5 of median". Throws fb::UsageError
// naming `what` (e.g. "rule 'x': min") with the spellings that are allowed.
Limit parse_limit(std::string_view text, Bound bound, std::string_view what);

}  // namespace fb::accept
