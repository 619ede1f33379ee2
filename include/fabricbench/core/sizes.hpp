// Message sizes: parsing "64M"-style byte counts and expanding the sweep grid
// the way nccl-tests does (-b min, -e max, -f factor or -i step).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

// "8", "1K", "64M", "8G", "1T" (binary multiples, as nccl-tests), "1KiB", "4MiB".
// Throws UsageError naming `what` (e.g. "--minbytes") on anything else; "1GB" is
// rejected as ambiguous (decimal or binary?) with the spellings that are not.
std::uint64_t parse_bytes(std::string_view text, std::string_view what);

// "8 B", "64 KiB", "1.5 GiB": for humans, not for parsing back.
std::string format_bytes(std::uint64_t bytes);

struct SizeGrid {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64ull << 20;
  double step_factor = 2.0;      // multiplicative step; used when step_bytes == 0
  std::uint64_t step_bytes = 0;  // additive step (-i); 0 = use step_factor
};

// Every size of the sweep, ascending. Throws UsageError on a grid that is empty,
// out of order or would not advance.
std::vector<std::uint64_t> expand(const SizeGrid& grid);

}  // namespace fb
