#include "fabricbench/model/calibrate.hpp"

#include <yaml-cpp/yaml.h>

#include <sstream>

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

}  // namespace fb::model
