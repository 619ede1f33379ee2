// The two levels a step's traffic crosses: the fabric inside a node (per GPU)
// and the network between nodes (per node). Each is a preset or a measured
// results file; a measured level answers with its curve where the op and
// rank count were measured and the size lies inside the sweep, with the
// curve's fit outside it, and with alpha/beta derived from the fits for
// shapes it never ran (other node counts).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/types.hpp"
#include "fabricbench/model/fit.hpp"
#include "fabricbench/model/presets.hpp"

namespace fb::model {

// How a time was obtained, for the tables: "measured" (inside the sweep),
// "fit" (outside it, the curve's fit), "model" (a ring with alpha and
// bandwidth derived from a measurement, for shapes it never ran), "preset"
// (a ring with a preset's figures).
enum class Basis { measured, fit, model, preset };
std::string_view name(Basis basis);

struct Link {
  std::string label;      // "8x400g-ndr-ib", "results/a.jsonl@inter"
  double alpha_us = 0;    // per hop
  double bw_gbps = 0;     // achievable per direction: per GPU (intra) or per node (inter)
  double line_gbps = 0;   // line rate per direction (0 when measured)
  std::vector<Curve> curves;  // measured curves, sizes per node for rail rows
  std::string source;     // preset source, or how alpha/bw were derived
};

struct Timed {
  double time_us = 0;
  Basis basis = Basis::model;
};

// Time of one collective (nccl-tests size) on n ranks over the link.
Timed link_time(const Link& link, Op op, int nranks, double bytes);

Link network_link(const NetworkPreset& preset, int nics_per_node);
Link node_link(const NodePreset& preset);

// A measured level from a results file at one scope. Rail rows are turned
// into node-level curves (bytes x groups). Throws fb::UsageError naming the
// file when the scope has no collective with a bandwidth fit.
Link measured_link(const Results& results, std::string_view scope, std::string_view label);

// Network specs: "10gbe", "8x400g-ndr-ib" (NICs per node), "FILE.jsonl"
// (its rail or inter rows) or "FILE.jsonl@SCOPE" (that scope's rows stand in
// for the network, e.g. a one-node run's global rows). Node specs: a node
// preset, "FILE.jsonl" (intra rows, or global on a one-node run) or
// "FILE.jsonl@SCOPE". Relative paths are taken from `base_dir` ("" = as is).
Link resolve_network(std::string_view spec, const Presets& presets, const std::string& base_dir = "");
Link resolve_node(std::string_view spec, const Presets& presets, const std::string& base_dir = "");

struct Fabric {
  Link intra;
  Link inter;
};

}  // namespace fb::model
