// The results-record reader on any bytes: a std::runtime_error naming the
// file and line, or records whose measurements write back and read again.
#include <nlohmann/json.hpp>
#include <sstream>

#include "fabricbench/core/record.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  fb::Results r;
  try {
    r = fb::parse_results(in, "fuzz.jsonl");
  } catch (const std::runtime_error&) {
    return 0;  // the documented way to refuse a record
  }
  if (r.line_count == 0 || r.header.schema_version.empty()) fb::fuzz::broken("a record without a header was accepted");
  for (const auto& m : r.measurements) {
    try {
      fb::check_measurement_figures(m);
    } catch (const std::runtime_error&) {
      fb::fuzz::broken("the reader accepted a measurement whose figures break the record's invariants");
    }
    const fb::Measurement again = fb::measurement_from_json(fb::to_json(m));
    if (again.op != m.op || again.bytes != m.bytes || again.wrong != m.wrong || again.wrong_at != m.wrong_at)
      fb::fuzz::broken("a measurement does not survive to_json and back");
  }
  return 0;
}
