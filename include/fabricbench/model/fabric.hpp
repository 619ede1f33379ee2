// The two levels a step's traffic crosses: the fabric inside a node (per GPU)
// and the network between nodes (per node). Each is a preset or a measured
// results file. A measured level keeps its curves (used where the op, the
// rank count and the group's shape were measured) and the latency per step
// and bandwidth derived from their fits (for every other shape).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/types.hpp"
#include "fabricbench/model/fit.hpp"
#include "fabricbench/model/presets.hpp"

namespace fb::model {

// How a time was obtained, for the tables: "measured" (a measured curve,
// inside the sweep), "fit" (the curve's fit, outside it), "model" (NCCL's
// algorithms on latency and bandwidth derived from a measurement, for shapes
// it never ran), "preset" (NCCL's algorithms on a preset's figures).
enum class Basis { measured, fit, model, preset };
std::string_view name(Basis basis);

// What a level is: a preset's kind (NCCL's per-hop latencies and protocols
// follow from it) or measured.
enum class LinkKind { nvlink, pcie, rdma, tcp, measured };

struct Link {
  std::string label;          // "8x400g-ndr-ib", "results/a.jsonl@rail"
  LinkKind kind = LinkKind::measured;
  double bw_gbps = 0;         // achievable busbw: per GPU (intra) or per node, all NICs (inter)
  double line_gbps = 0;       // line rate, same unit (0 when measured)
  int nics = 0;               // network presets: NICs per node
  double extra_hop_us = 0;    // presets: latency per step beyond NCCL's table
  double hop_us = 0;          // measured: latency per ring step, from the fit
  double nvls_gbps = 0;       // node presets: NVLS all_reduce busbw (0: none)
  int domain_gpus = 0;        // node presets: GPUs of one NVLink domain (0: the host's, or measured)
  std::string scope;          // measured: the scope its curves come from
  int measured_nodes = 1;     // measured: nodes of the run (ranks per node of global rows)
  std::vector<Curve> curves;  // measured curves, as recorded (rail rows per rail)
  std::string source;         // preset source, or how latency and bandwidth were derived
  bool measured() const { return kind == LinkKind::measured; }
};

Link network_link(const NetworkPreset& preset, int nics_per_node);
Link node_link(const NodePreset& preset);

// A measured level from a results file at one scope. Throws fb::UsageError
// naming the file when the scope has no collective with a bandwidth fit.
Link measured_link(const Results& results, std::string_view scope, std::string_view label);

// Network specs: "8x400g-ndr-ib" (NICs per node x a network preset; a bare
// preset name is refused: the count decides the answer), "FILE.jsonl" (its
// rail or inter rows) or "FILE.jsonl@SCOPE" (that scope's rows stand in for
// the network, e.g. a one-node run's global rows). Node specs: a node preset,
// "FILE.jsonl" (intra rows, or global on a one-node run) or
// "FILE.jsonl@SCOPE". Relative paths are taken from `base_dir` ("" = as is).
Link resolve_network(std::string_view spec, const Presets& presets, const std::string& base_dir = "");
Link resolve_node(std::string_view spec, const Presets& presets, const std::string& base_dir = "");

struct Fabric {
  Link intra;
  Link inter;
  GpuArch arch = GpuArch::ampere;  // the GPUs', for NCCL's protocol limits
};

// The link's one-line description for the tables' assumptions:
// "8x400g-ndr-ib: 8 NICs x 50 GB/s x 96% = 384 GB/s per node, rdma".
std::string describe(const Link& link, bool network);

}  // namespace fb::model
