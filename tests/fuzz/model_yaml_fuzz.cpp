// The model's YAML parsers (fb::model, include/fabricbench/model/*.hpp) on any
// text: the first byte picks the parser, the rest is the file. The documented
// refusal is fb::UsageError naming the key; anything else escaping (a
// YAML::Exception from a node read as the wrong type, std::out_of_range,
// a crash, UB, a leak) is a finding.
#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/quotes.hpp"
#include "fabricbench/model/workload.hpp"
#include "fuzz_input.hpp"

namespace {

void parse(std::uint8_t which, std::string_view text) {
  switch (which % 5) {
    case 0: {
      const fb::model::Workload w = fb::model::parse_workload(text);
      (void)w.tokens_per_step();
      break;
    }
    case 1:
      (void)fb::model::parse_quotes(text);
      break;
    case 2:
      (void)fb::model::parse_network_presets(text);
      break;
    case 3:
      (void)fb::model::parse_node_presets(text);
      break;
    default:
      (void)fb::model::parse_gpu_presets(text);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fb::fuzz::Input in(data, size);
  const std::uint8_t which = in.byte();
  try {
    parse(which, in.remaining());
  } catch (const fb::UsageError&) {
  }
  return 0;
}
