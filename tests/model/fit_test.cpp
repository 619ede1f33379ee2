// The alpha-beta fit: recovers known parameters from noisy rows, reports its
// error, interpolates inside the measured sizes and extrapolates outside.
#include "fabricbench/model/fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "model_rows.hpp"

namespace fb::model {
namespace {

std::vector<FitPoint> points_of(const std::vector<Measurement>& rows) {
  std::vector<FitPoint> pts;
  for (const auto& m : rows) pts.push_back({static_cast<double>(m.bytes), m.time.median_us});
  return pts;
}

TEST(Fit, RecoversAlphaAndBetaFromNoisyRowsWithin5Percent) {
  struct Case {
    double alpha_us, beta_gbps, noise;
  };
  for (const Case c : {Case{20.0, 10.0, 0.03}, Case{1.5, 190.0, 0.05}, Case{35.0, 1.06, 0.05}}) {
    const Fit f = fit_alpha_beta(points_of(test::alpha_beta_rows("all_reduce", "inter", 2, c.alpha_us, c.beta_gbps,
                                                                  c.noise)));
    EXPECT_NEAR(f.alpha_us, c.alpha_us, 0.05 * c.alpha_us);
    EXPECT_NEAR(f.beta_gbps, c.beta_gbps, 0.05 * c.beta_gbps);
    EXPECT_NEAR(f.n_half_bytes, f.alpha_us * f.beta_gbps * 1e3, 1e-6 * f.n_half_bytes);
    EXPECT_GT(f.rms_rel_error, 0.0);  // noise is there, and reported
    EXPECT_LE(f.max_rel_error, 2.5 * c.noise);
    EXPECT_EQ(f.points, 24u);
  }
}

TEST(Fit, ExactRowsGiveZeroError) {
  const Fit f = fit_alpha_beta(points_of(test::alpha_beta_rows("all_gather", "intra", 8, 5.0, 300.0, 0.0)));
  EXPECT_NEAR(f.alpha_us, 5.0, 1e-6);
  EXPECT_NEAR(f.beta_gbps, 300.0, 1e-6);
  EXPECT_LT(f.rms_rel_error, 1e-9);
}

TEST(Fit, NegativeInterceptIsClampedAndFlatCurvesHaveNoBandwidth) {
  // Pure bandwidth with a dip at small sizes would fit alpha < 0: clamped,
  // and beta through the origin from the largest quarter of the sizes.
  const std::vector<FitPoint> pts{{1000, 0.5}, {2000, 1.9}, {4000, 4.0}, {8000, 8.0}};
  const Fit clamped = fit_alpha_beta(pts);
  EXPECT_EQ(clamped.alpha_us, 0.0);
  EXPECT_NEAR(clamped.beta_gbps, 8000 / 8.0 / 1e3, 1e-9);
  EXPECT_EQ(clamped.beta_points, 1u);
  EXPECT_NEAR(clamped.beta_rms_rel_error, 0.0, 1e-12);
  const Fit flat = fit_alpha_beta(std::vector<FitPoint>{{8, 3.0}, {64, 3.0}, {512, 3.0}});
  EXPECT_FALSE(flat.valid());
  EXPECT_NEAR(flat.alpha_us, 3.0, 1e-12);
  const Fit one = fit_alpha_beta(std::vector<FitPoint>{{8, 3.0}});
  EXPECT_FALSE(one.valid());
  EXPECT_FALSE(fit_alpha_beta({}).valid());
}

// alpha comes from the small sizes and beta from the large ones: a middle
// that follows neither (a protocol switch) bends neither, and each end's
// residual is reported on its own.
TEST(Fit, AlphaFromSmallSizesBetaFromLargeOnes) {
  std::vector<FitPoint> pts;
  for (double b = 8; b <= (64 << 20); b *= 2) {
    double t = 12.0 + b / 20e3;  // 12 us + S / (20 GB/s)
    if (b >= 4096 && b <= (1 << 20)) t *= 1.6;  // a slow protocol in the middle
    pts.push_back({b, t});
  }
  const Fit f = fit_alpha_beta(pts);
  EXPECT_NEAR(f.alpha_us, 12.0, 1e-6);
  EXPECT_NEAR(f.beta_gbps, 20.0, 1e-6);
  EXPECT_EQ(f.alpha_points, 6u);
  EXPECT_EQ(f.beta_points, 6u);
  EXPECT_LT(f.alpha_rms_rel_error, 1e-9);
  EXPECT_LT(f.beta_rms_rel_error, 1e-9);
  EXPECT_GT(f.max_rel_error, 0.3);  // the middle is off, and the overall error says so
}

TEST(Fit, CurveUsesMeasuredPointsInsideAndTheFitOutside) {
  // A curve with a bump the fit cannot follow: inside, the measurement wins.
  Curve c;
  c.points = {{1024, 10.0}, {2048, 40.0}, {4096, 20.0}};
  c.fit = fit_alpha_beta(c.points);
  EXPECT_DOUBLE_EQ(c.time_us(2048), 40.0);
  EXPECT_TRUE(c.covers(3000));
  const double mid = c.time_us(std::sqrt(2048.0 * 4096.0));  // halfway on log axes
  EXPECT_NEAR(mid, std::sqrt(40.0 * 20.0), 1e-9);
  // Past the end: the fit's alpha plus the last point's bandwidth, joining it.
  EXPECT_FALSE(c.covers(8192));
  EXPECT_NEAR(c.time_us(4096 * (1 + 1e-12)), 20.0, 1e-6);
  const double alpha = std::min(c.fit.alpha_us, 20.0);
  EXPECT_NEAR(c.time_us(8192), alpha + 2 * (20.0 - alpha), 1e-9);
  ASSERT_EQ(c.priced_point(), 2u) << "no cliff: the largest size";
  EXPECT_NEAR(c.gbps_at(c.priced_point()), 4096 / (20.0 - alpha) / 1e3, 1e-12);
}

TEST(Fit, CurvesPerOpScopeAndShapePreferOutOfPlaceRows) {
  auto rows = test::alpha_beta_rows("all_reduce", "global", 2, 2.0, 5.0, 0.0, 8, 1024);
  auto in_place = rows;
  for (auto& m : in_place) {
    m.in_place = true;
    m.time.median_us *= 3;  // would spoil the fit if mixed in
  }
  rows.insert(rows.end(), in_place.begin(), in_place.end());
  const auto bcast = test::alpha_beta_rows("broadcast", "global", 2, 1.0, 4.0, 0.0, 8, 1024);
  for (auto m : bcast) {
    m.in_place = true;  // MPI's broadcast is in-place only
    rows.push_back(m);
  }
  const auto intra = test::alpha_beta_rows("all_reduce", "intra", 4, 3.0, 20.0, 0.0, 8, 1024);
  rows.insert(rows.end(), intra.begin(), intra.end());

  const auto curves = fit_curves(test::make_results(rows));
  ASSERT_EQ(curves.size(), 3u);
  EXPECT_EQ(curves[0].op, "all_reduce");
  EXPECT_FALSE(curves[0].in_place);
  EXPECT_EQ(curves[0].points.size(), 8u);
  EXPECT_NEAR(curves[0].fit.beta_gbps, 5.0, 1e-6);
  EXPECT_EQ(curves[1].op, "broadcast");
  EXPECT_TRUE(curves[1].in_place);
  EXPECT_EQ(curves[2].scope, "intra");
  EXPECT_EQ(curves[2].nranks, 4);
}

}  // namespace
}  // namespace fb::model
