// One self-contained HTML page a person can read on a laptop or print: what
// was measured on which hardware, the curves with their spread and the
// paths' spec peaks, two records side by side as ratios, the pair matrix,
// the acceptance verdict with the bad nodes, and what each quote costs a
// workload. Inline SVG and CSS only: no script, nothing fetched. Every figure
// drawn also sits in a data-* attribute, so a test can read the page back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/record.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/quotes.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::report {

struct RecordInput {
  std::string path;
  std::string label;  // "A", "B", ... ("" with one record)
  Results results;
};

// check.json as `fabricbench check` writes it (accept/report.hpp), read
// through the record's own check-line struct.
// One entry of check.json's "bad": a node (or its device, or a link from it)
// that a failed rule blames.
struct Blamed {
  std::string host;
  std::string device;  // "" when the rule blamed the node as a whole
  std::string peer;    // the link's other end, for node-pair rules
  std::string rule;
  double figure = 0;
  std::string unit;
};

struct CheckDocument {
  std::string path;
  std::string profile;
  std::string status;  // pass, fail, error, incomplete
  int exit_code = 0;
  std::string results;  // the record it judged
  std::string run_error;
  int pass = 0, fail = 0, skip = 0, error = 0;
  std::vector<CheckLine> verdicts;
  std::vector<Blamed> bad;  // check.json's "bad", in its order
};
// Throws fb::UsageError naming `what` (the flag or command that gave it), the
// path and the key for what is not a check.json.
CheckDocument read_check_json(const std::string& path, const std::string& what = "--check");

struct QuotesInput {
  std::string workload_path;
  std::string quotes_path;
  model::Workload workload;
  model::QuoteSet quotes;
  model::Presets presets;
};

struct HtmlInputs {
  std::vector<RecordInput> records;
  std::optional<CheckDocument> check;
  std::optional<QuotesInput> quotes;
  std::string generator;     // "fabricbench 0.1.0 (abc123def456)"
  std::string generated_at;  // UTC
};

// Throws fb::UsageError when the quotes cannot be evaluated.
std::string render_html(const HtmlInputs& in);

}  // namespace fb::report
