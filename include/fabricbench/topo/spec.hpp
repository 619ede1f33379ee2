// Spec peaks: what a link promises per direction, in GB/s (1e9 bytes/s),
// from its generation and width (PCIe, NVLink) or its rate (NICs). And the
// parsers for the strings the kernel writes those in.
#pragma once

#include <string>
#include <string_view>

#include "fabricbench/topo/fact.hpp"

namespace fb::topo {

// Usable bytes per second per lane and direction after line encoding, GB/s.
// Unknown for generations outside 1..6.
Fact<double> pcie_lane_gbps(int gen);
Fact<double> pcie_peak_gbps(int gen, int width);
// The generation of a sysfs link speed: "32.0 GT/s PCIe", "16 GT/s", "8.0 GT/s".
Fact<int> pcie_gen_from_speed(std::string_view sysfs_speed);

// Per link and direction, GB/s, by NVLink generation (1..5).
Fact<double> nvlink_link_gbps(int generation);
// The NVLink generation of a GPU architecture (NVML_DEVICE_ARCH_*): the chip
// fixes it, and NVML's per-link version number is not reliable across drivers.
Fact<int> nvlink_generation_of_arch(unsigned nvml_arch);
// The generation NVML's nvmlNvlinkVersion_t names (1.0 -> 1, 2.2 -> 2, 4.0 -> 4).
Fact<int> nvlink_generation_of_nvml_version(unsigned nvml_version);
std::string arch_name(unsigned nvml_arch);

// An InfiniBand port rate as /sys/class/infiniband/*/ports/*/rate writes it:
// "400 Gb/sec (4X NDR)".
struct IbRate {
  double gbit = 0;          // the number before "Gb/sec"
  std::string width_speed;  // "4X NDR"; "" when the string has no parenthesis
  std::string speed;        // "NDR"
};
Fact<IbRate> parse_ib_rate(std::string_view text);

// A link rate in Gb/s (bits) as GB/s (bytes).
inline double gbit_to_gbps(double gbit) { return gbit / 8.0; }

// "400 Gb/s" with no trailing ".0"; keeps fractions ("2.5 Gb/s").
std::string format_gbit(double gbit);

}  // namespace fb::topo
