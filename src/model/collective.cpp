// NCCL's algorithms and protocols priced on a fabric, the fastest chosen as
// NCCL's tuner chooses (src/graph/tuning.cc; the numbers in nccl_tuning.hpp).
#include "fabricbench/model/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "fabricbench/model/formulas.hpp"
#include "fabricbench/model/units.hpp"
#include "nccl_tuning.hpp"

namespace fb::model {
namespace {

using nccl::Proto;

std::size_t at(Proto p) { return static_cast<std::size_t>(p); }

// One step over a level for an algorithm's row of NCCL's hwLat table, plus
// what the preset adds; a measured level's own latency per step.
double hop_us(const Link& l, bool tree_row, Proto p) {
  const nccl::PerProto* row = &nccl::kNetRing;
  switch (l.kind) {
    case LinkKind::measured: return l.hop_us;
    case LinkKind::nvlink: row = tree_row ? &nccl::kNvlinkTree : &nccl::kNvlinkRing; break;
    case LinkKind::pcie: row = tree_row ? &nccl::kPciTree : &nccl::kPciRing; break;
    case LinkKind::rdma:
    case LinkKind::tcp: row = tree_row ? &nccl::kNetTree : &nccl::kNetRing; break;
  }
  return (*row)[at(p)] + l.extra_hop_us;
}

struct Group {
  const Fabric& f;
  Op op;
  double bytes;
  GroupShape s;
  RingFactors ring;
  bool crosses_nodes() const { return s.nodes > 1; }
  bool has_intra() const { return s.per_node > 1; }
  // Every level it crosses is measured: NCCL's fixed costs are inside the
  // measured latency, and its protocols are what was measured.
  bool all_measured() const {
    return (!has_intra() || f.intra.measured()) && (!crosses_nodes() || f.inter.measured());
  }
  bool any_measured() const {
    return (has_intra() && f.intra.measured()) || (crosses_nodes() && f.inter.measured());
  }
};

// The busbw a ring (or tree) of the group reaches: the slowest link it
// crosses. Inside a node that is the GPU's fabric; across nodes it is the
// node's NICs together (one per rail, in parallel) shared by the groups
// running at once, since each ring enters and leaves a node once per
// channel: a node's egress carries one rank's busbw.
double link_bw(const Group& g) {
  if (!g.crosses_nodes()) return g.f.intra.bw_gbps;
  const double net = g.f.inter.bw_gbps / g.s.sharing;
  return g.has_intra() ? std::min(g.f.intra.bw_gbps, net) : net;
}

std::string bw_origin(const Group& g) {
  if (!g.crosses_nodes()) return fmt::format("{} per GPU", g.f.intra.label);
  const std::string net = g.s.sharing > 1 ? fmt::format("{} / {} groups", g.f.inter.label, g.s.sharing)
                                          : g.f.inter.label;
  return g.has_intra() ? fmt::format("slowest of {} per GPU and {} per node", g.f.intra.label, net) : net + " per node";
}

double ll_cap(const Group& g) {
  if (g.s.nodes == 1) return nccl::kLlMaxOneNode.at(static_cast<std::size_t>(g.f.arch));
  return g.s.nodes == 2 ? nccl::kLlMaxTwoNodes : nccl::kLlMaxManyNodes;
}

// NCCL allows LL128 over NVLink (or one GPU per node) and, across nodes,
// over RDMA only (its enable rule: typeIntra <= NVB, typeInter <= PXB/PXN).
bool ll128_allowed(const Group& g) {
  const bool intra_ok = !g.has_intra() || g.f.intra.kind == LinkKind::nvlink;
  const bool inter_ok = !g.crosses_nodes() || g.f.inter.kind == LinkKind::rdma;
  return intra_ok && inter_ok;
}

std::vector<Proto> protocols(const Group& g) {
  if (g.any_measured()) return {Proto::simple};
  if (ll128_allowed(g)) return {Proto::ll, Proto::ll128, Proto::simple};
  return {Proto::ll, Proto::simple};
}

CollectiveCost make(const char* algo, Proto p, double latency_us, double bw_gbps, double wire_bytes,
                    std::string formula) {
  CollectiveCost c;
  c.algorithm = algo;
  c.protocol = nccl::kProtoNames[at(p)];
  c.latency_us = latency_us;
  c.time_us = latency_us + wire_bytes / (bw_gbps * kBytesPerUsPerGbps);
  c.busbw_gbps = bw_gbps;
  c.formula = std::move(formula);
  return c;
}

CollectiveCost ring(const Group& g, Proto p) {
  const int inter = g.ring.inter_steps, intra = g.ring.steps - inter;
  const double base = g.all_measured() ? 0.0 : nccl::kBaseRing[at(p)];
  double hi = g.has_intra() ? hop_us(g.f.intra, false, p) : 0.0;
  if (g.crosses_nodes() && g.has_intra() && !g.f.intra.measured()) hi = std::max(hi, nccl::kNetOverhead[at(p)]);
  // With one GPU per node NCCL charges the network step from its tree row.
  const double ho = g.crosses_nodes() ? hop_us(g.f.inter, !g.has_intra(), p) : 0.0;
  double lat = base + intra * hi + inter * ho;
  const bool plateau = g.op == Op::all_reduce && g.crosses_nodes() && p == Proto::simple && !g.all_measured();
  if (plateau) lat *= nccl::kRingPlateau;
  const double b = link_bw(g);
  const double bw = p == Proto::ll ? std::min(b * nccl::kRingLl, ll_cap(g)) : p == Proto::ll128 ? b * nccl::kRingLl128 : b;
  const std::string formula =
      fmt::format("ring {} on {} ranks: {:.3g} + {} x {:.3g} + {} x {:.3g} us{} = {:.4g} us; {:.3g} x S / {:.4g} GB/s "
                  "({})",
                  nccl::kProtoNames[at(p)], g.s.ranks(), base, intra, hi, inter, ho, plateau ? " x 1.4" : "", lat,
                  g.ring.wire, bw, bw_origin(g));
  return make("ring", p, lat, bw, g.ring.wire * g.bytes, formula);
}

// NCCL's trees serve all_reduce only: up to the root and back down, so the
// algorithm bandwidth is half the busbw, and NCCL corrects the medium sizes.
CollectiveCost tree(const Group& g, Proto p) {
  const double base = g.all_measured() ? 0.0 : nccl::kBaseTree[at(p)];
  const double hi = g.has_intra() ? hop_us(g.f.intra, true, p) : 0.0;
  const double ho = g.crosses_nodes() ? hop_us(g.f.inter, true, p) : 0.0;
  const int depth = static_cast<int>(std::floor(std::log2(static_cast<double>(g.s.nodes))));
  const double lat = base + 2.0 * ((g.s.per_node - 1) * hi + depth * ho);
  double bw = link_bw(g) * nccl::kTree;
  if (p == Proto::ll) bw = std::min(bw * nccl::kTreeLl, ll_cap(g));
  if (p == Proto::ll128) bw *= g.s.nodes == 1 ? nccl::kTreeLl128OneNode : nccl::kTreeLl128;
  const double log_size = std::floor(std::log2(std::max(1.0, g.bytes / 64.0)));
  const double correction =
      log_size < nccl::kTreeSizes ? nccl::kTreeCorrection[at(p)][static_cast<std::size_t>(log_size)] : 1.0;
  bw *= correction;
  const double algbw = bw * nccl::kTreeAlgbw;
  const std::string formula = fmt::format(
      "tree {} on {} ranks: {:.3g} + 2 x ({} x {:.3g} + {} x {:.3g}) us = {:.4g} us; S / ({:.4g} x 0.92 x {:.2g} x 0.5 "
      "GB/s) ({})",
      nccl::kProtoNames[at(p)], g.s.ranks(), base, g.s.per_node - 1, hi, depth, ho, lat, link_bw(g), correction,
      bw_origin(g));
  // As nccl-tests' busbw: the wire factor of the size over the same time.
  CollectiveCost c = make("tree", p, lat, algbw, g.bytes, formula);
  c.busbw_gbps = c.time_us > lat ? g.ring.wire * g.bytes / ((c.time_us - lat) * kBytesPerUsPerGbps) : algbw;
  return c;
}

CollectiveCost nvls(const Group& g) {
  const std::string formula = fmt::format("nvls on {} ranks: {:.3g} us; {:.3g} x S / {:.4g} GB/s ({} NVLS)",
                                          g.s.ranks(), nccl::kNvlsUs, g.ring.wire, g.f.intra.nvls_gbps, g.f.intra.label);
  return make("nvls", Proto::simple, nccl::kNvlsUs, g.f.intra.nvls_gbps, g.ring.wire * g.bytes, formula);
}

// Point-to-point: one step at its level, the size at the link's rate (the
// GPUs of a node that send at once share its NICs).
CollectiveCost p2p(const Group& g) {
  const bool inter = g.crosses_nodes();
  const double lat = inter ? hop_us(g.f.inter, false, Proto::simple) : hop_us(g.f.intra, false, Proto::simple);
  const double bw = inter ? g.f.inter.bw_gbps / g.s.sharing : g.f.intra.bw_gbps;
  const std::string formula =
      fmt::format("p2p: {:.3g} us; S / {:.4g} GB/s ({})", lat, bw,
                  inter ? fmt::format("{} per node{}", g.f.inter.label,
                                      g.s.sharing > 1 ? fmt::format(" / {} senders", g.s.sharing) : "")
                        : g.f.intra.label + " per GPU");
  return make("p2p", Proto::simple, lat, bw, g.bytes, formula);
}

// A measured curve of this op on a group of this shape: on one node the
// node's curves with this many ranks; across nodes the network's curves with
// this many ranks, as many per node, and as many groups at once (rail rows
// run every rail together).
const Curve* measured_curve(const Group& g) {
  const Link& l = g.crosses_nodes() ? g.f.inter : g.f.intra;
  if (!l.measured()) return nullptr;
  for (const auto& c : l.curves) {
    if (parse_op(c.op) != g.op || c.nranks != g.s.ranks() || !c.fit.valid()) continue;
    if (!g.crosses_nodes()) return &c;
    const int per_node = l.scope == "global" && l.measured_nodes > 1 ? c.nranks / l.measured_nodes : 1;
    if (per_node == g.s.per_node && c.groups == g.s.sharing) return &c;
  }
  return nullptr;
}

CollectiveCost from_curve(const Group& g, const Curve& c) {
  CollectiveCost out;
  out.algorithm = "measured";
  out.time_us = c.time_us(g.bytes);
  out.latency_us = std::min(c.fit.alpha_us, out.time_us);
  const double transfer = out.time_us - out.latency_us;
  out.busbw_gbps = transfer > 0 ? g.ring.wire * g.bytes / (transfer * kBytesPerUsPerGbps) : 0.0;
  out.basis = c.covers(g.bytes) ? Basis::measured : Basis::fit;
  out.formula = fmt::format("measured {} on {} ranks ({}): {} ({:.4g} us)", c.op, c.nranks,
                            g.crosses_nodes() ? g.f.inter.label : g.f.intra.label,
                            out.basis == Basis::measured ? "interpolated between the measured sizes"
                                                         : "the fit's latency plus the edge point's bandwidth",
                            out.time_us);
  return out;
}

double inter_wire(const Group& g, const std::string& algorithm) {
  if (!g.crosses_nodes()) return 0.0;
  const double per_group = algorithm == "tree" ? 2.0 * g.bytes : algorithm == "p2p" ? g.bytes : g.ring.wire * g.bytes;
  return per_group * g.s.sharing;
}

}  // namespace

CollectiveCost collective_cost(const Fabric& fabric, Op op, double bytes, const GroupShape& shape) {
  const Group g{fabric, op, bytes, shape, ring_factors(op, shape.ranks(), shape.nodes)};
  const bool point_to_point = is_pair_op(op) || op == Op::sendrecv;
  CollectiveCost best;
  best.where = g.crosses_nodes() ? (g.has_intra() ? "intra+inter" : "inter") : "intra";
  if ((!point_to_point && shape.ranks() <= 1) || bytes <= 0) {
    best.algorithm = "none";
    best.formula = "nothing to move";
    return best;
  }
  if (const Curve* c = measured_curve(g)) {
    best = from_curve(g, *c);
  } else if (point_to_point) {
    best = p2p(g);
    best.basis = g.all_measured() ? Basis::model : Basis::preset;
  } else {
    std::optional<CollectiveCost> pick;
    const auto consider = [&](CollectiveCost c) {
      if (!pick || c.time_us < pick->time_us) pick = std::move(c);
    };
    for (const Proto p : protocols(g)) {
      consider(ring(g, p));
      if (op == Op::all_reduce) consider(tree(g, p));
    }
    if (op == Op::all_reduce && !g.crosses_nodes() && fabric.intra.nvls_gbps > 0 && !fabric.intra.measured())
      consider(nvls(g));
    best = *pick;
    best.basis = g.all_measured() ? Basis::model : Basis::preset;  // a preset level is the weaker basis
  }
  best.where = g.crosses_nodes() ? (g.has_intra() ? "intra+inter" : "inter") : "intra";
  best.inter_wire_bytes = inter_wire(g, best.algorithm);
  return best;
}

}  // namespace fb::model
