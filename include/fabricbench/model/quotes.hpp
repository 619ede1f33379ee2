// Price quotes: the same workload on each quoted cluster, the time to finish
// the job, what it costs under the quote's billing, ranked with the winner
// and why. YAML: profiles/quotes/*.yaml, keys in docs/model.md#quotes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/model/memory.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/step.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model {

enum class Billing { hourly, monthly, spot };
std::string_view name(Billing billing);

struct Quote {
  std::string name;
  std::string gpu;
  int gpus_per_node = 8;
  int nodes = 1;
  std::string network;  // "8x400g-ndr-ib" (the NIC count is required) or a results file
  std::string node;     // "" = the GPU's default node preset
  double price_per_gpu_hour = 0;  // a node-hour price is divided by gpus_per_node
  Billing billing = Billing::hourly;
  double monthly_discount = 0;     // monthly: fraction off, billed in whole months of 730 h
  double preemption_overhead = 0;  // spot: extra wall time lost to preemptions and restarts
};

// How long the job is: tokens to train, or hours on a reference quote.
struct Job {
  double tokens = 0;
  std::string reference_quote;
  double reference_hours = 0;
};

struct QuoteSet {
  std::string currency = "USD";
  // `presets:`: a presets file laid over the built-in set for these quotes
  // (add_presets); load_quotes resolves it against the quotes file's folder.
  std::string presets;
  Job job;
  std::vector<Quote> quotes;
};

// Throws fb::UsageError naming the quote and key.
QuoteSet parse_quotes(std::string_view yaml_text);
QuoteSet load_quotes(const std::string& path);

// The billing arithmetic alone: what `hours` of wall time on the quote cost.
// hourly: hours x GPUs x price; spot: the same on hours x (1 + overhead);
// monthly: whole months of 730 h at (1 - discount).
double job_cost(const Quote& q, double hours);
// Wall hours, with the spot overhead.
double billed_hours(const Quote& q, double hours);

struct QuoteResult {
  Quote quote;
  StepCost step;
  MemoryFit memory;        // at the workload's ZeRO stage
  double hours = 0;        // wall time to finish, billing overhead included
  double cost = 0;
  double cost_per_effective_gpu_hour = 0;  // cost / (GPU-hours of useful compute)
  int rank = 0;            // 1 = cheapest among those that fit
};

// Evaluates and ranks (by cost; quotes that do not fit in memory last).
// `base_dir` resolves results files named in the quotes.
std::vector<QuoteResult> evaluate_quotes(const QuoteSet& set, const Workload& w, const Presets& presets,
                                         const std::string& base_dir,
                                         double exposed_target = kDefaultExposedTarget);

// "vendor-b wins: ..." — the winner against the runner-up, in numbers.
std::string verdict(const std::vector<QuoteResult>& ranked, const std::string& currency);

}  // namespace fb::model
