// The alpha-beta fit of a measured curve, T(S) = alpha + S / beta, per op and
// scope (Hockney's model: R. Hockney, "The communication challenge for MPP",
// Parallel Computing 20(3), 1994). The measured curve is kept: predictions
// interpolate it where the size lies inside the sweep and use the fit outside.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fabricbench/core/cliff.hpp"
#include "fabricbench/core/record.hpp"

namespace fb::model {

struct FitPoint {
  double bytes = 0;    // row size, nccl-tests convention (docs/results-schema.md)
  double time_us = 0;  // the row's median
};

struct Fit {
  double alpha_us = 0;
  double beta_gbps = 0;      // 0 when time does not grow with size: no bandwidth to fit
  double n_half_bytes = 0;   // alpha * beta: the size that reaches half of beta
  double rms_rel_error = 0;  // of the fit against all the points, relative to each point
  double max_rel_error = 0;
  double alpha_rms_rel_error = 0;  // over the small sizes alpha comes from
  double beta_rms_rel_error = 0;   // over the large sizes beta comes from
  std::size_t alpha_points = 0;
  std::size_t beta_points = 0;
  std::size_t points = 0;
  bool valid() const { return beta_gbps > 0; }
  double time_us(double bytes) const;
};

// alpha from the small sizes and beta from the large ones, each on relative
// error (1/T^2 weights, so 8 B and 64 KiB rows count alike): the smallest
// quarter of the sizes (at least one) gives alpha = their time less their
// bandwidth term, the largest quarter gives beta through alpha; twice, so
// each sees the other's estimate. A middle that fits neither (a protocol
// switch) then cannot bend either parameter. alpha is clamped at 0; a
// bandwidth needs two or more distinct sizes.
Fit fit_alpha_beta(std::span<const FitPoint> points);

// One op at one scope and group shape, from a results file.
struct Curve {
  std::string op;
  std::string scope;
  std::string dtype;
  int nranks = 0;
  int groups = 1;
  bool in_place = false;
  std::vector<FitPoint> points;  // ascending bytes, one per size
  Fit fit;
  // Where bandwidth falls off a cliff (core/cliff.hpp), if it does: the fit's
  // beta then comes from the sizes past it, and a link derived from the curve
  // prices the sizes below it (priced_point).
  std::optional<Cliff> cliff;

  bool covers(double bytes) const;  // inside the measured sizes
  // Log-log interpolation of the measured points inside. Outside, the fit's
  // form anchored at the nearest measured point: the fit's alpha plus that
  // point's bandwidth, so the prediction joins the curve without a jump even
  // where the curve is not alpha-beta shaped (a loaded host, a protocol
  // switch). Mostly used past the largest size.
  double time_us(double bytes) const;
  // Bandwidth of point i once alpha is taken off.
  double gbps_at(std::size_t i) const;
  // The point a link's bandwidth comes from: the largest size (the regime
  // bucket-sized collectives live in), or the largest below a cliff.
  std::size_t priced_point() const;
};

// Every (op, scope, nranks, groups, dtype) of a results file, out-of-place
// rows where there are any (in-place otherwise: MPI's broadcast).
std::vector<Curve> fit_curves(const Results& results);

// A results file for the model: refuses (fb::UsageError naming the path)
// what is not a regular file (a device or a FIFO would be read forever or
// block) and turns the reader's errors into usage errors.
Results load_results(const std::string& path);

}  // namespace fb::model
