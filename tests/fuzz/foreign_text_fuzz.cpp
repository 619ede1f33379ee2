// The readers of other programs' text on any bytes: training logs
// (diagnose --iter-log, its built-in formats and an --iter-regex), nccl-tests
// output as text and as -J JSON (report import nccl-tests), and NCCL INFO
// logs (report nccl-log). The first byte picks the reader. Each may refuse
// with fb::UsageError; anything else it throws, a crash (the std::regex stack
// overflow on a long line was one), UB or a figure that is not a finite
// positive time fails.
#include <cmath>
#include <sstream>
#include <string>

#include "fabricbench/backends/nccl_log/nccl_log_model.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/diagnose/iter_log.hpp"
#include "fabricbench/report/nccl_tests.hpp"
#include "fuzz_input.hpp"

namespace {

void iterations(const std::string& text, const fb::diagnose::IterOptions& options) {
  const auto s = fb::diagnose::parse_iterations(text, options);
  for (const double v : s.values)
    if (!std::isfinite(v) || v <= 0) fb::fuzz::broken("an iteration time that is not a finite positive number");
}

void nccl_tests_text(const std::string& text) {
  std::istringstream in(text);
  const auto r = fb::report::parse_nccl_tests_text(in, "fuzz.log", {});
  for (const auto& t : r.tables)
    for (const auto& m : t.rows)
      if (!(m.time.median_us >= 0)) fb::fuzz::broken("an imported row with a negative or NaN time");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 5) {
      case 0: iterations(text, {}); break;
      case 1: iterations(text, {.regex = "took ([0-9.]+) ?ms", .regex_scale = 1e-3}); break;
      case 2: nccl_tests_text(text); break;
      case 3: fb::report::parse_nccl_tests_json(text, "fuzz.json", {}); break;
      case 4: fb::nccl_log::read_log(text); break;
    }
  } catch (const fb::UsageError&) {
    return 0;  // the documented way to refuse foreign text
  }
  return 0;
}
