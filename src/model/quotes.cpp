// Quotes: parsing, the billing arithmetic, evaluation and ranking.
#include "fabricbench/model/quotes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "fabricbench/core/errors.hpp"
#include "yaml_fields.hpp"

namespace fb::model {
namespace {

using detail::Fields;

constexpr double kHoursPerMonth = 730.0;  // 8760 h / 12, as cloud monthly prices count

Billing parse_billing(const Fields& f) {
  const std::string b = f.optional_text("billing").value_or("hourly");
  if (b == "hourly") return Billing::hourly;
  if (b == "monthly") return Billing::monthly;
  if (b == "spot") return Billing::spot;
  throw UsageError(fmt::format("{} '{}': allowed: hourly, monthly, spot", f.name("billing"), b));
}

Quote parse_quote(const YAML::Node& node, const std::string& where) {
  Fields named(node, where, {"name", "gpu", "gpus_per_node", "nodes", "network", "node", "price_per_gpu_hour",
                             "price_per_node_hour", "billing", "monthly_discount", "preemption_overhead"});
  Quote q;
  q.name = named.text("name");
  named.set_where(fmt::format("quote '{}'", q.name));
  q.gpu = named.text("gpu");
  q.gpus_per_node = named.integer("gpus_per_node");
  q.nodes = named.integer("nodes");
  q.network = named.optional_text("network").value_or("");
  q.node = named.optional_text("node").value_or("");
  if (named.has("price_per_gpu_hour") == named.has("price_per_node_hour"))
    throw UsageError(fmt::format("{}: give exactly one of price_per_gpu_hour or price_per_node_hour", named.where()));
  q.price_per_gpu_hour = named.has("price_per_gpu_hour") ? named.number("price_per_gpu_hour")
                                                         : named.number("price_per_node_hour") / q.gpus_per_node;
  if (q.price_per_gpu_hour <= 0) throw UsageError(fmt::format("{}: the price must be positive", named.where()));
  q.billing = parse_billing(named);
  q.monthly_discount = named.fraction_or("monthly_discount", 0);
  q.preemption_overhead = named.fraction_or("preemption_overhead", 0);
  if (named.has("monthly_discount") && q.billing != Billing::monthly)
    throw UsageError(fmt::format("{}: monthly_discount needs billing: monthly", named.where()));
  if (named.has("preemption_overhead") && q.billing != Billing::spot)
    throw UsageError(fmt::format("{}: preemption_overhead needs billing: spot", named.where()));
  return q;
}

Job parse_job(const Fields& top) {
  Job job;
  if (!top.has("job")) return job;
  const Fields f(top.node("job"), "quotes: job", {"tokens", "reference"});
  if (f.has("tokens") == f.has("reference"))
    throw UsageError("quotes: job: give exactly one of tokens (e.g. 300B) or reference: {quote: NAME, hours: H}");
  if (f.has("tokens")) {
    job.tokens = f.count("tokens");
  } else {
    const Fields r(f.node("reference"), "quotes: job: reference", {"quote", "hours"});
    job.reference_quote = r.text("quote");
    job.reference_hours = r.number("hours");
    if (job.reference_hours <= 0) throw UsageError("quotes: job: reference: hours must be positive");
  }
  return job;
}

Workload on_quote(const Workload& w, const Quote& q) {
  Workload out = w;
  out.cluster.gpu = q.gpu;
  out.cluster.nodes = q.nodes;
  out.cluster.gpus_per_node = q.gpus_per_node;
  out.cluster.node = q.node;
  out.cluster.network = q.network;
  out.dp = 0;  // dp follows the quote's GPU count
  return out;
}

QuoteResult evaluate(const Quote& q, const Workload& w, const Presets& presets, const std::string& base_dir,
                     double target) {
  try {
    const Workload wq = on_quote(w, q);
    const GpuPreset& gpu = presets.gpu(q.gpu, "gpu");
    const Fabric fabric = fabric_for(wq, q.network, presets, base_dir);
    QuoteResult r;
    r.quote = q;
    r.step = predict_step(wq, fabric, presets, target);
    r.memory = memory_fit(wq, gpu).at(static_cast<std::size_t>(w.zero));
    return r;
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("quote '{}': {}", q.name, e.what()));
  }
}

double job_steps(const QuoteSet& set, const Workload& w, const std::vector<QuoteResult>& results) {
  if (!set.job.reference_quote.empty()) {
    for (const auto& r : results)
      if (r.quote.name == set.job.reference_quote) return set.job.reference_hours * 3.6e9 / r.step.step_us;
    throw UsageError(fmt::format("quotes: job: reference: quote '{}' is not one of the quotes",
                                 set.job.reference_quote));
  }
  const double tokens = set.job.tokens > 0 ? set.job.tokens : w.tokens;
  if (tokens <= 0)
    throw UsageError("quotes: job: missing: give tokens (here or as the workload's training: tokens) or reference: "
                     "{quote: NAME, hours: H}");
  return std::ceil(tokens / w.tokens_per_step());
}

std::string money(double v, const std::string& currency) { return fmt::format("{} {:.0f}", currency, v); }

}  // namespace

std::string_view name(Billing billing) {
  switch (billing) {
    case Billing::monthly: return "monthly";
    case Billing::spot: return "spot";
    case Billing::hourly: return "hourly";
  }
  return "hourly";
}

QuoteSet parse_quotes(std::string_view yaml_text) {
  const YAML::Node doc = detail::load_yaml(yaml_text, "quotes");
  const Fields top(doc, "quotes", {"currency", "job", "quotes", "presets"});
  QuoteSet set;
  set.currency = top.optional_text("currency").value_or("USD");
  set.presets = top.optional_text("presets").value_or("");
  set.job = parse_job(top);
  for (const YAML::Node& item : detail::list(top, "quotes")) {
    set.quotes.push_back(parse_quote(item, fmt::format("quotes[{}]", set.quotes.size())));
    for (std::size_t i = 0; i + 1 < set.quotes.size(); ++i)
      if (set.quotes[i].name == set.quotes.back().name)
        throw UsageError(fmt::format("quotes: '{}' appears twice; names must differ", set.quotes.back().name));
  }
  if (set.quotes.empty()) throw UsageError("quotes: the list is empty");
  return set;
}

QuoteSet load_quotes(const std::string& path) {
  QuoteSet set = detail::parse_file(path, "quotes file", parse_quotes);
  if (!set.presets.empty() && std::filesystem::path(set.presets).is_relative())
    set.presets = (std::filesystem::path(path).parent_path() / set.presets).lexically_normal().string();
  return set;
}

double billed_hours(const Quote& q, double hours) {
  return q.billing == Billing::spot ? hours * (1.0 + q.preemption_overhead) : hours;
}

double job_cost(const Quote& q, double hours) {
  const double gpus = static_cast<double>(q.nodes) * q.gpus_per_node;
  if (q.billing == Billing::monthly) {
    const double months = std::ceil(hours / kHoursPerMonth - 1e-9);
    return months * kHoursPerMonth * gpus * q.price_per_gpu_hour * (1.0 - q.monthly_discount);
  }
  return billed_hours(q, hours) * gpus * q.price_per_gpu_hour;
}

std::vector<QuoteResult> evaluate_quotes(const QuoteSet& set, const Workload& w, const Presets& presets,
                                         const std::string& base_dir, double exposed_target) {
  std::vector<QuoteResult> results;
  for (const auto& q : set.quotes) results.push_back(evaluate(q, w, presets, base_dir, exposed_target));
  const double steps = job_steps(set, w, results);
  for (auto& r : results) {
    const double run_hours = steps * r.step.step_us / 3.6e9;
    r.hours = billed_hours(r.quote, run_hours);
    r.cost = job_cost(r.quote, run_hours);
    const double gpus = static_cast<double>(r.quote.nodes) * r.quote.gpus_per_node;
    r.cost_per_effective_gpu_hour = r.cost / (gpus * run_hours * r.step.efficiency);
  }
  std::stable_sort(results.begin(), results.end(), [](const QuoteResult& a, const QuoteResult& b) {
    if (a.memory.fits != b.memory.fits) return a.memory.fits;
    return a.cost < b.cost;
  });
  for (std::size_t i = 0; i < results.size(); ++i) results[i].rank = static_cast<int>(i) + 1;
  return results;
}

std::string verdict(const std::vector<QuoteResult>& ranked, const std::string& currency) {
  if (ranked.empty()) return "";
  const QuoteResult& a = ranked.front();
  if (!a.memory.fits)
    return fmt::format("no quote fits the workload in GPU memory at ZeRO-{}; see `fabricbench model memory`",
                       a.memory.zero);
  if (ranked.size() == 1) return fmt::format("{}: {} for the job, the only quote", a.quote.name, money(a.cost, currency));
  const QuoteResult& b = ranked[1];
  const double price_ratio = a.quote.price_per_gpu_hour / b.quote.price_per_gpu_hour;
  const double gpu_hours_ratio = (a.hours * a.quote.nodes * a.quote.gpus_per_node) /
                                 (b.hours * b.quote.nodes * b.quote.gpus_per_node);
  std::string why =
      price_ratio > 1.0
          ? fmt::format("it costs {:.2f}x as much per GPU-hour but needs {:.2f}x the GPU-hours", price_ratio,
                        gpu_hours_ratio)
          : fmt::format("it costs {:.2f}x as much per GPU-hour and needs {:.2f}x the GPU-hours", price_ratio,
                        gpu_hours_ratio);
  return fmt::format("{} wins: {} for the job against {} for {} ({:.0f}% less), finishing in {:.0f} h against {:.0f} h; "
                     "{}: communication takes {:.0f}% of its step against {:.0f}% (effective efficiency {:.0f}% "
                     "against {:.0f}%){}",
                     a.quote.name, money(a.cost, currency), money(b.cost, currency), b.quote.name,
                     100.0 * (1.0 - a.cost / b.cost), a.hours, b.hours, why, 100 * a.step.exposed_share,
                     100 * b.step.exposed_share, 100 * a.step.efficiency, 100 * b.step.efficiency,
                     b.memory.fits ? "" : fmt::format("; {} does not fit in memory", b.quote.name));
}

}  // namespace fb::model
