// What each price quote costs a workload, from the model run in-process
// (model/quotes.hpp, as `fabricbench model quotes` does): communication
// share, efficiency, time and cost per quote, and cost against time with
// the cheapest quote marked.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "fabricbench/core/units.hpp"
#include "fabricbench/model/quotes.hpp"
#include "fabricbench/report/svg.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

using model::QuoteResult;

std::string billing(const model::Quote& q) {
  switch (q.billing) {
    case model::Billing::monthly: return fmt::format("monthly, {} off", html::pct(q.monthly_discount));
    case model::Billing::spot: return fmt::format("spot, +{} preemptions", html::pct(q.preemption_overhead));
    case model::Billing::hourly: return "hourly";
  }
  return "hourly";
}

std::string money(double v, const std::string& currency) { return fmt::format("{} {:.0f}", currency, v); }

std::string cost_chart(const std::vector<QuoteResult>& ranked, const std::string& currency) {
  svg::Chart c;
  c.id = next_id("q");
  c.title = "Cost of the job against its wall time, per quote";
  double hmin = 1e300, hmax = 0, cmin = 1e300, cmax = 0;
  for (const auto& r : ranked) {
    hmin = std::min(hmin, r.hours);
    hmax = std::max(hmax, r.hours);
    cmin = std::min(cmin, r.cost);
    cmax = std::max(cmax, r.cost);
  }
  // Log axes where quotes differ by more than 4x (10GbE against InfiniBand), linear from 0 otherwise.
  const bool log_h = hmax > 4 * hmin, log_c = cmax > 4 * cmin;
  c.x = svg::Axis{"wall time to finish the job (hours)", log_h ? svg::Scale::log : svg::Scale::linear};
  c.y = svg::Axis{fmt::format("cost of the job ({})", currency), log_c ? svg::Scale::log : svg::Scale::linear};
  if (!log_h) c.x.lo = 0;
  if (!log_c) c.y.lo = 0;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& r = ranked[i];
    svg::Series s;
    s.label = fmt::format("{}: {} x {} {}, {}", r.quote.name, r.quote.nodes, r.quote.gpus_per_node, r.quote.gpu,
                          r.step.network);
    s.colour = colour(i);
    s.line = false;
    s.marker_size = 5;
    s.points.push_back({r.hours, r.cost,
                        fmt::format("{}: {:.0f} h, {}", r.quote.name, r.hours, money(r.cost, currency)),
                        {{"quote", r.quote.name}, {"hours", html::exact(r.hours)}, {"cost", html::exact(r.cost)}}});
    c.series.push_back(std::move(s));
  }
  const auto cheapest = std::find_if(ranked.begin(), ranked.end(), [](const QuoteResult& r) { return r.rank == 1; });
  if (cheapest != ranked.end() && cheapest->memory.fits)
    c.notes.push_back({cheapest->hours, cheapest->cost, "cheapest: " + cheapest->quote.name});
  return svg::render(c);
}

std::string quotes_table(const std::vector<QuoteResult>& ranked, const std::string& currency) {
  std::vector<Row> rows;
  for (const auto& r : ranked) {
    const auto& q = r.quote;
    const bool cheapest = r.rank == 1 && r.memory.fits;
    rows.push_back(
        {{std::to_string(r.rank), (cheapest ? "<b>" : std::string()) + html::text(q.name) + (cheapest ? "</b>" : ""),
          html::text(fmt::format("{} x {} {}", q.nodes, q.gpus_per_node, q.gpu)), html::text(r.step.network),
          html::text(r.step.network_line_gbps > 0 ? format_line_rate(r.step.network_line_gbps) : "measured"),
          html::text(billing(q)), html::num(q.price_per_gpu_hour), html::num(r.step.step_us / 1e6),
          html::pct(r.step.comm_share), html::pct(r.step.exposed_share), html::pct(r.step.efficiency),
          html::num(r.hours), html::text(money(r.cost, currency)), html::num(r.cost_per_effective_gpu_hour),
          r.memory.fits ? "yes" : "<span class=\"v-fail\">no</span>"},
         fmt::format(" data-quote=\"{}\" data-rank=\"{}\" data-cost=\"{}\" data-hours=\"{}\" data-comm-share=\"{}\" "
                     "data-efficiency=\"{}\" data-cheapest=\"{}\"",
                     html::attr(q.name), r.rank, html::exact(r.cost), html::exact(r.hours),
                     html::exact(r.step.comm_share), html::exact(r.step.efficiency), cheapest ? 1 : 0)});
  }
  return table({"rank", "quote", "GPUs", "network", "line rate per node", "billing",
                fmt::format("price ({}/GPU-h)", currency), "step (s)", "communication share", "exposed share",
                "effective efficiency", "hours", "cost", fmt::format("per effective GPU-h ({})", currency),
                "fits memory"},
               rows, "num quotes");
}

}  // namespace

Section quotes(const HtmlInputs& in) {
  if (!in.quotes) return {"quotes", "Quotes", ""};
  const QuotesInput& q = *in.quotes;
  const auto base = std::filesystem::path(q.quotes_path).parent_path().string();
  const auto ranked = model::evaluate_quotes(q.quotes, q.workload, q.presets, base);
  if (ranked.empty()) return {"quotes", "Quotes", ""};
  std::string assumptions, caveats;
  for (const auto& a : ranked.front().step.assumptions) assumptions += "<li>" + html::text(a) + "</li>";
  for (const auto& c : ranked.front().step.caveats)
    caveats += "<p class=\"caveat\"><b>Caveat:</b> " + html::text(c) + "</p>";
  const std::string body = fmt::format(
      "<p>Workload <b>{}</b> ({}) on each quote of {}: the model prices every collective of a training step as "
      "NCCL's tuner does, over the quote's nodes and network, and bills the time the job takes.</p>"
      "<p class=\"headline\">{}</p>{}{}<div class=\"grid\"><div>{}</div></div>"
      "<details><summary>What the model assumes (first quote)</summary><ul>{}</ul></details>",
      html::text(q.workload.name), html::text(q.workload_path), html::text(q.quotes_path),
      html::text(model::verdict(ranked, q.quotes.currency)), caveats, quotes_table(ranked, q.quotes.currency),
      cost_chart(ranked, q.quotes.currency), assumptions);
  return {"quotes", "Quotes", wrap("quotes", "What each quote costs the job", body)};
}

}  // namespace fb::report::section
