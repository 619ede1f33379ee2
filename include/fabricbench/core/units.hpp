// Rates as people write them, read in one place for every input a person
// types (model presets and quotes, acceptance thresholds): so "400Gbps" is
// the same rate in a quote and in a rule. Case matters: b is bits, B bytes.
//   bits per second, as the network world writes line rates: "400G",
//     "10GbE", "400 Gb/s", "400Gbps", "400 Gbit/s" (also M and T, b/s, bit/s);
//   bytes per second: "50 GB/s", "50 GBps", "25 GiB/s" (also B/s, KB/s, MB/s,
//     TB/s, MiB/s, TiB/s).
// Refused: a bare number, lower-case "gb/s" or "gbps" (bits or bytes?), and a
// size without "/s" ("50GB"). Every rate comes back in GB/s (1e9 bytes/s),
// the unit of every `_gbps` key in records and JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fb {

// GB/s per one `unit` ("Gbps" -> 0.125), or nullopt for what is not a rate.
std::optional<double> rate_unit_gbps(std::string_view unit);

// Why `unit` is not a rate, in words ("'gb/s' is ambiguous ..."), for messages.
std::string rate_unit_problem(std::string_view unit);

// The spellings, for messages: "400G, 400 Gb/s, 400Gbps or 400 Gbit/s (bits) or 50 GB/s (bytes)".
std::string_view rate_spellings();

// "400 Gb/s" -> 50. Throws fb::UsageError naming `what` (the input) and the
// spellings accepted.
double parse_rate_gbps(std::string_view text, std::string_view what);

// A rate in GB/s (the record's `_gbps`) as Gbit/s (`_gbit`, how line rates are quoted).
constexpr double gbit_of(double gbps) { return gbps * 8; }
// For people: a line rate in Gbit/s ("10 Gbit/s", "3200 Gbit/s") from GB/s.
std::string format_line_rate(double gbps);

}  // namespace fb
