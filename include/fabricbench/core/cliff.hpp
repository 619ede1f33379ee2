// A cliff in a bandwidth curve: from one size to the next, bandwidth falls at
// least 4x, to under an eighth of the best that a smaller size reached in the
// bandwidth regime, and no larger size climbs back. That is an algorithm
// switch of the library (Open MPI 4.1's all_reduce on 2 local ranks falls from
// about 7 GB/s at 16 MiB to 0.44 GB/s at 32 MiB and above; a bare MPI program
// shows the same) or a link that fails at large sizes, not noise. On this
// project's machines, curves of healthy links (shared memory, emulated nodes
// at 1 and 10 Gbit/s, NCCL on an H200) sag by at most 2.7x from their best as
// buffers outgrow the caches (8.1x with the 2 cores loaded, but about 2x from
// one size to the next), and a one-size spike from load (7.6x measured) climbs
// back at the next size. Only sizes in the bandwidth regime set the best:
// where the time has hardly grown above the curve's smallest, busbw is bytes
// over a latency, not a rate the link sustained (an eager broadcast on an
// emulated 1 Gbit/s link "reaches" 4.9 GB/s at 32 KiB in 7 us, then 0.12 GB/s
// from 64 KiB on: the link's rate, not a cliff). `run` warns about cliffs once
// per op and scope; `model` prices a link measured across one from the sizes
// below it and says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace fb {

struct BandwidthPoint {
  std::uint64_t bytes = 0;
  double gbps = 0;     // any bandwidth of the curve (algbw, busbw): only ratios within it count
  double time_us = 0;  // the size's time, to tell the bandwidth regime from latency
};

struct Cliff {
  std::size_t at = 0;     // the first size past the edge (index into the curve; >= 1)
  double best_gbps = 0;   // the best bandwidth of the sizes before it
  double after_gbps = 0;  // the best bandwidth from `at` to the last size
  double factor() const { return after_gbps > 0 ? best_gbps / after_gbps : 0; }
};

// How far below the best before it a curve must fall, and stay, to be a cliff.
inline constexpr double kCliffFactor = 8.0;
// How far it must fall in one step: a sag is gradual, an algorithm switch is not.
inline constexpr double kCliffStep = 4.0;
// A size is in the bandwidth regime once its time is this many times the
// curve's smallest, or at least kBandwidthRegimeUs: longer than any fabric's
// latency (NVLink and InfiniBand take 1-10 us, TCP 20-60 us), so a sweep
// that starts at large sizes is judged too.
inline constexpr double kBandwidthRegime = 10.0;
inline constexpr double kBandwidthRegimeUs = 100.0;

// The first cliff of a curve in ascending size order, if it has one. A fall at
// the last size counts: nothing larger was measured to climb back.
std::optional<Cliff> find_cliff(std::span<const BandwidthPoint> ascending);

}  // namespace fb
