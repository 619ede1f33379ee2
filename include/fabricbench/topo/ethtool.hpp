// An interface's driver statistics, the list `ethtool -S IF` prints: read
// through the SIOCETHTOOL ioctl on a machine, or parsed from the captured
// text of `ethtool -S IF` in a copied tree. Drivers report pause frames
// (IEEE 802.3x and PFC) only there, not in /sys/class/net/IF/statistics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/topo/fact.hpp"

namespace fb::topo {

// The driver's statistics (the ETH_SS_STATS string set) in the driver's
// order: values[i] is the count named names[i].
struct EthtoolStats {
  std::vector<std::string> names;
  std::vector<std::uint64_t> values;
};

// The text of `ethtool -S IF`: "NIC statistics:", then "     name: value"
// lines. Unknown, naming `path` and the line, when a line is not such a
// pair: the position of every name matters, so no line is skipped.
Fact<EthtoolStats> parse_ethtool_stats(std::string_view text, const std::string& path);

// Through the ioctl on a datagram socket, so in this process's network
// namespace. The names the driver lists (ETHTOOL_GSSET_INFO, then
// ETHTOOL_GSTRINGS); empty when the driver has no statistics at all (the
// kernel then leaves ETH_SS_STATS out of the answer, as for loopback).
Fact<std::vector<std::string>> ethtool_stat_names(const std::string& ifname);
// The values now (ETHTOOL_GSTATS); unknown, saying so, when the driver's
// list is no longer `expected` long (a changed list moves every index).
Fact<std::vector<std::uint64_t>> ethtool_stat_values(const std::string& ifname, std::size_t expected);

enum class PauseDirection { rx, tx };
// The positions in `names` of the statistics that count pause frames in
// that direction: link-level and per-priority (PFC), the drivers' names in
// ethtool.cpp's table. Empty when the driver reports none.
std::vector<std::size_t> pause_stat_indices(const std::vector<std::string>& names, PauseDirection direction);
// values[i] summed over `indices`; unknown when an index is past the end
// or the sum would not fit 64 bits, naming `what`.
Fact<std::uint64_t> sum_stats(const std::vector<std::uint64_t>& values, const std::vector<std::size_t>& indices,
                              const std::string& what);

}  // namespace fb::topo
