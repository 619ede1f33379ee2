// NCCL's own cost model of its algorithms and protocols, as numbers: the
// tables of NCCL's tuner (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel
// and ncclTopoGetAlgoTime, the version with PAT and Blackwell rows, NCCL
// 2.24 and later; the ring and tree Simple values below are unchanged since
// NCCL 2.19). Latencies in microseconds; bandwidth factors are fractions of
// the link's busbw. Internal to the model; docs/model.md explains each.
#pragma once

#include <array>
#include <cstddef>

#include "fabricbench/model/presets.hpp"

namespace fb::model::nccl {

enum class Proto { ll, ll128, simple };
inline constexpr std::size_t kProtos = 3;
static_assert(static_cast<std::size_t>(Proto::simple) + 1 == kProtos);
inline constexpr std::array<const char*, kProtos> kProtoNames{"LL", "LL128", "Simple"};

using PerProto = std::array<double, kProtos>;  // indexed by Proto

// baseLat: fixed cost of one call, per algorithm and protocol.
inline constexpr PerProto kBaseRing{6.6, 14.0, 8.4};
inline constexpr PerProto kBaseTree{6.8, 14.0, 8.4};
// hwLat: cost of one step over NVLink, PCI or the network.
inline constexpr PerProto kNvlinkRing{0.6, 1.9, 3.4};
inline constexpr PerProto kNvlinkTree{0.6, 1.25, 4.0};
inline constexpr PerProto kPciRing{1.0, 2.5, 5.7};
inline constexpr PerProto kPciTree{1.0, 1.9, 4.0};
inline constexpr PerProto kNetRing{2.7, 4.0, 14.0};
inline constexpr PerProto kNetTree{5.0, 8.5, 14.0};  // also a ring's network step at one GPU per node
// NVLS all_reduce inside one node: its whole latency (baseLat 0, hwLat NVLink NVLS Simple).
inline constexpr double kNvlsUs = 25.0;
// Multi-node rings pay at least the network proxy's post overhead per step:
// 1 us on x86 Intel hosts (2 on AMD), x3 for Simple (getNetOverhead).
inline constexpr PerProto kNetOverhead{1.0, 1.0, 3.0};
// Ring all_reduce across nodes, Simple: latency x1.4 on sm80 and newer
// ("plateau effect of ring", ncclTopoGetAlgoTime).
inline constexpr double kRingPlateau = 1.4;

// Bandwidth refinements of ncclTopoTuneModel.
inline constexpr double kRingLl = 0.5;         // ring LL: busbw x .5, at most the LL cap
inline constexpr double kRingLl128 = 0.92;     // ring LL128 (120/128 of the line payload)
inline constexpr double kTree = 0.92;          // tree all_reduce, every protocol
inline constexpr double kTreeLl = 1.0 / 3.8;   // then x 1/3.8 for LL, at most the LL cap
inline constexpr double kTreeLl128OneNode = 7.0 / 9.0;
inline constexpr double kTreeLl128 = 120.0 / 128.0;
inline constexpr double kTreeAlgbw = 0.5;      // tree algbw = busbw x .5 (data goes up, then down)

// LL's cap (llMaxBws), GB/s: one node by GPU architecture, indexed by
// GpuArch (Ampere's row also for sm89 Ada; Blackwell's is 2 x 141 from NCCL
// 2.24 on; AMD's cdna3 has no row: RCCL skips this cap and scales by its own
// tables, not modelled, so Hopper's stands in), two nodes and more by CPU
// vendor (Intel row).
inline constexpr std::array<double, kGpuArchs> kLlMaxOneNode{
    87.7,       // ampere
    87.7,       // ada (sm89: NCCL's Ampere row)
    141.0,      // hopper
    2 * 141.0,  // blackwell
    141.0,      // cdna3: stand-in, see above
};
static_assert(static_cast<std::size_t>(GpuArch::cdna3) + 1 == kLlMaxOneNode.size());
inline constexpr double kLlMaxTwoNodes = 39.0;
inline constexpr double kLlMaxManyNodes = 20.4;

// treeCorrectionFactor: tree all_reduce bandwidth x this at sizes 64 B x 2^i
// (i = log2(bytes / 64), 0..22), per protocol.
inline constexpr std::size_t kTreeSizes = 23;
inline constexpr std::array<std::array<double, kTreeSizes>, kProtos> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

}  // namespace fb::model::nccl
