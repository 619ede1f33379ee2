// The size-grid parser: fb::parse_bytes on any text, fb::expand on any grid.
// Bad input must be a UsageError; a grid that expands must be what -b -e -f
// -i promise: ascending, from -b, within -e, additive steps exact.
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fuzz_input.hpp"

namespace {

void parse(const std::string& text) {
  std::uint64_t v = 0;
  try {
    v = fb::parse_bytes(text, "--minbytes");
  } catch (const fb::UsageError&) {
    return;
  }
  if (fb::parse_bytes(std::to_string(v), "--minbytes") != v) fb::fuzz::broken("parse_bytes(to_string(v)) != v");
  (void)fb::format_bytes(v);
}

void grid(fb::fuzz::Input& in) {
  fb::SizeGrid g;
  g.min_bytes = in.u64();
  g.max_bytes = in.u64();
  g.step_factor = in.f64();
  g.step_bytes = in.byte() & 1 ? in.u64() : 0;
  std::vector<std::uint64_t> sizes;
  try {
    sizes = fb::expand(g);
  } catch (const fb::UsageError&) {
    return;
  }
  if (sizes.empty() || sizes.front() != g.min_bytes) fb::fuzz::broken("the grid does not start at -b");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > g.max_bytes) fb::fuzz::broken("a size beyond -e");
    if (i > 0 && sizes[i] <= sizes[i - 1]) fb::fuzz::broken("sizes not ascending");
    if (i > 0 && g.step_bytes > 0 && sizes[i] - sizes[i - 1] != g.step_bytes) fb::fuzz::broken("additive step not -i");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fb::fuzz::Input in(data, size);
  if (in.byte() & 1)
    grid(in);
  else
    parse(std::string(in.remaining()));
  return 0;
}
