#include "fabricbench/topo/spec.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

namespace fb::topo {
namespace {

// PCIe per lane and direction, after line encoding (PCI-SIG base
// specifications): Gen1 2.5 GT/s and Gen2 5.0 GT/s with 8b/10b; Gen3 8 GT/s,
// Gen4 16 GT/s and Gen5 32 GT/s with 128b/130b; Gen6 64 GT/s in 256-byte FLITs
// of which 242 bytes are not FEC or CRC. GT/s x efficiency / 8 bits = GB/s.
constexpr std::array kPcieLaneGbps{
    2.5 * 8 / 10 / 8,      // Gen1 0.25
    5.0 * 8 / 10 / 8,      // Gen2 0.5
    8.0 * 128 / 130 / 8,   // Gen3 0.985
    16.0 * 128 / 130 / 8,  // Gen4 1.969
    32.0 * 128 / 130 / 8,  // Gen5 3.938
    64.0 * 242 / 256 / 8,  // Gen6 7.563
};
constexpr std::array kPcieGts{2.5, 5.0, 8.0, 16.0, 32.0, 64.0};

// NVLink per link and direction, GB/s, from NVIDIA's datasheets: P100 (NVLink1)
// 4 links, 160 GB/s both directions; V100 (NVLink2) 6 links, 300 GB/s; A100
// (NVLink3) 12 links, 600 GB/s; H100/H200 (NVLink4) 18 links, 900 GB/s (H800:
// 8 links, 400 GB/s); B200 (NVLink5) 18 links, 1.8 TB/s.
constexpr std::array kNvLinkLinkGbps{20.0, 25.0, 25.0, 25.0, 50.0};

// NVML_DEVICE_ARCH_* (NVML API reference, nvmlDeviceArchitecture_t).
struct Arch {
  unsigned nvml;
  const char* name;
  int nvlink;  // generation; 0 when the architecture has no NVLink
};
constexpr std::array kArchs{
    Arch{2, "Kepler", 0}, Arch{3, "Maxwell", 0}, Arch{4, "Pascal", 1}, Arch{5, "Volta", 2},      Arch{6, "Turing", 2},
    Arch{7, "Ampere", 3}, Arch{8, "Ada", 0},     Arch{9, "Hopper", 4}, Arch{10, "Blackwell", 5},
};

const Arch* find_arch(unsigned nvml) {
  for (const auto& a : kArchs)
    if (a.nvml == nvml) return &a;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// A leading decimal number; the rest of the text after it.
Fact<double> leading_number(std::string_view& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return Fact<double>::unknown("no number");
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return v;
}

}  // namespace

Fact<double> pcie_lane_gbps(int gen) {
  if (gen < 1 || gen > static_cast<int>(kPcieLaneGbps.size()))
    return Fact<double>::unknown(fmt::format("PCIe generation {} is not one of 1 to 6", gen));
  return kPcieLaneGbps[static_cast<std::size_t>(gen - 1)];
}

Fact<double> pcie_peak_gbps(int gen, int width) {
  const auto lane = pcie_lane_gbps(gen);
  if (!lane) return lane;
  if (width < 1 || width > 32) return Fact<double>::unknown(fmt::format("PCIe width x{} is not 1 to 32 lanes", width));
  return *lane * width;
}

Fact<int> pcie_gen_from_speed(std::string_view speed) {
  std::string_view rest = trim(speed);
  const auto gts = leading_number(rest);
  if (gts && trim(rest).starts_with("GT/s"))
    for (std::size_t i = 0; i < kPcieGts.size(); ++i)
      if (std::abs(*gts - kPcieGts[i]) < 1e-6) return static_cast<int>(i + 1);
  return Fact<int>::unknown(fmt::format("link speed '{}' is not a PCIe rate (2.5 to 64 GT/s)", speed));
}

Fact<double> nvlink_link_gbps(int generation) {
  if (generation < 1 || generation > static_cast<int>(kNvLinkLinkGbps.size()))
    return Fact<double>::unknown(fmt::format("NVLink generation {} has no rate on file (known: 1 to 5)", generation));
  return kNvLinkLinkGbps[static_cast<std::size_t>(generation - 1)];
}

Fact<int> nvlink_generation_of_arch(unsigned nvml_arch) {
  const Arch* a = find_arch(nvml_arch);
  if (!a) return Fact<int>::unknown(fmt::format("GPU architecture {} is not on file", nvml_arch));
  if (a->nvlink == 0) return Fact<int>::unknown(fmt::format("{} GPUs have no NVLink", a->name));
  return a->nvlink;
}

Fact<int> nvlink_generation_of_nvml_version(unsigned v) {
  // nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0.
  constexpr std::array kGen{0, 1, 2, 2, 3, 3, 4, 5};
  if (v == 0 || v >= kGen.size()) return Fact<int>::unknown(fmt::format("NVML NVLink version {} is not on file", v));
  return kGen[v];
}

std::string arch_name(unsigned nvml_arch) {
  const Arch* a = find_arch(nvml_arch);
  return a ? a->name : fmt::format("architecture {}", nvml_arch);
}

Fact<IbRate> parse_ib_rate(std::string_view text) {
  const auto odd = [&] {
    return Fact<IbRate>::unknown(fmt::format("rate '{}' does not read as '<number> Gb/sec (<width> <speed>)'", text));
  };
  std::string_view rest = trim(text);
  const auto gbit = leading_number(rest);
  rest = trim(rest);
  if (!gbit || *gbit <= 0 || !rest.starts_with("Gb/sec")) return odd();
  rest = trim(rest.substr(6));
  IbRate r;
  r.gbit = *gbit;
  if (rest.empty()) return r;
  if (rest.front() != '(' || rest.back() != ')') return odd();
  r.width_speed = std::string(trim(rest.substr(1, rest.size() - 2)));
  const auto space = r.width_speed.rfind(' ');
  r.speed = space == std::string::npos ? r.width_speed : r.width_speed.substr(space + 1);
  return r;
}

std::string format_gbit(double gbit) { return fmt::format("{:g} Gb/s", gbit); }

}  // namespace fb::topo
