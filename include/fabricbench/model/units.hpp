// Units in the model's inputs. Each parser throws fb::UsageError naming `what`
// (the input: "networks.yaml: 10gbe: rate") and the spellings it accepts.
#pragma once

#include <string>
#include <string_view>

#include "fabricbench/core/units.hpp"

namespace fb::model {

// A link rate, returned in GB/s (1e9 bytes per second): the one parser every
// input shares (core/units.hpp), so a preset, a quote and an acceptance rule
// read "400Gbps" alike.
using fb::parse_rate_gbps;

// 1 GB/s = 1e9 bytes per second = 1e3 bytes per microsecond: the model's
// times are in microseconds and its rates in GB/s.
inline constexpr double kBytesPerUsPerGbps = 1e3;
// Memory sizes: presets and tables speak GiB.
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// A count of parameters or tokens: "7B", "7e9", "175B", "1.5T", "300M",
// "2M", "7000000000", "8.2G" (FLOPs). K, M, B or G (billion), T are powers
// of 1000.
double parse_count(std::string_view text, std::string_view what);

// A fraction: 0.4 or "40%", within [0, 1].
double parse_fraction(std::string_view text, std::string_view what);

// A plain number with no unit (throws on trailing text).
double parse_number(std::string_view text, std::string_view what);

}  // namespace fb::model
