#include "fabricbench/model/calibrate.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <sstream>

#include "fabricbench/model/step.hpp"

namespace fb::model {

std::string calibrated_workload_yaml(const std::string& yaml, double factor) {
  YAML::Node root = YAML::Load(yaml);
  YAML::Node compute = root["compute"];
  // The workload parsed, so its rate is a number (or "40%"): scale what it
  // states, the GEMM curve's share of it for a curve.
  const auto scaled = [&](const char* key) {
    const std::string text = compute[key].as<std::string>();
    const double v = text.ends_with("%") ? std::stod(text) / 100.0 : std::stod(text);
    compute[key] = v * factor;
  };
  if (compute["tflops"]) {
    scaled("tflops");
  } else if (compute["mfu"]) {
    scaled("mfu");
  } else if (compute["of_gemm"]) {
    scaled("of_gemm");
  }
  std::ostringstream out;
  out << "# Calibrated by `fabricbench step`: compute rate scaled by " << factor << " to the measured step.\n"
      << root << "\n";
  return out.str();
}

Fact<double> fit_busbw_share(const Workload& w, const Fabric& fabric, const Presets& presets,
                                   std::string_view group, double measured_step_us) {
  Workload at = w;
  double& share = at.busbw_share.of(group);
  const auto step_us = [&](double s) {
    share = s;
    return predict_step(at, fabric, presets).step_us;
  };
  constexpr double kLeast = 1e-3;
  const double full = step_us(1), least = step_us(kLeast);
  if (measured_step_us < full * (1 - 1e-9))
    return Fact<double>::unknown(fmt::format(
        "the measured {:.4g} s step is faster than the model's {:.4g} s at NCCL's own bus bandwidth: the workload's "
        "compute rate or overlap is slower than the run's (calibrate the rate first: fabricbench step "
        "--calibrated-workload)",
        measured_step_us / 1e6, full / 1e6));
  if (least <= full * (1 + 1e-9))
    return Fact<double>::unknown(fmt::format("the workload has no {} communication to stretch", group));
  if (measured_step_us > least)
    return Fact<double>::unknown(fmt::format(
        "{} communication cannot stretch the step to {:.4g} s ({:.4g} s at {} of NCCL's bus bandwidth): the time is "
        "lost elsewhere",
        group, measured_step_us / 1e6, least / 1e6, kLeast));
  // The step falls as the share rises: bisect on its logarithm.
  double lo = kLeast, hi = 1;
  for (int i = 0; i < 50 && hi / lo > 1 + 1e-6; ++i) {
    const double mid = std::sqrt(lo * hi);
    (step_us(mid) > measured_step_us ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace fb::model
