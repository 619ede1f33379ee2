// Quotes: billing arithmetic, job length, ranking with the winner and why,
// and bad input.
#include "fabricbench/model/quotes.hpp"

#include <gtest/gtest.h>

#include "fabricbench/core/errors.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

const char* kQuotes = R"(
currency: EUR
job: {reference: {quote: cheap, hours: 2000}}
quotes:
  - {name: cheap, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, network: 1x10gbe, price_per_gpu_hour: 1.0}
  - {name: fast, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, network: 8x200g-hdr-ib, price_per_node_hour: 12.8}
  - {name: month, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, network: 8x200g-hdr-ib, price_per_gpu_hour: 1.6,
     billing: monthly, monthly_discount: 25%}
  - {name: spot, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, network: 8x200g-hdr-ib, price_per_gpu_hour: 0.8,
     billing: spot, preemption_overhead: 0.2}
)";

TEST(Quotes, BillingArithmetic) {
  Quote q;
  q.nodes = 2;
  q.gpus_per_node = 8;
  q.price_per_gpu_hour = 2.0;
  EXPECT_DOUBLE_EQ(job_cost(q, 100), 100 * 16 * 2.0);
  q.billing = Billing::spot;
  q.preemption_overhead = 0.25;
  EXPECT_DOUBLE_EQ(billed_hours(q, 100), 125);
  EXPECT_DOUBLE_EQ(job_cost(q, 100), 125 * 16 * 2.0);
  q.billing = Billing::monthly;
  q.monthly_discount = 0.3;
  EXPECT_DOUBLE_EQ(job_cost(q, 100), 730 * 16 * 2.0 * 0.7);  // a whole month for 100 h
  EXPECT_DOUBLE_EQ(job_cost(q, 730), 730 * 16 * 2.0 * 0.7);
  EXPECT_DOUBLE_EQ(job_cost(q, 731), 2 * 730 * 16 * 2.0 * 0.7);
}

TEST(Quotes, RankedByCostWithTheReferenceDurationExact) {
  const QuoteSet set = parse_quotes(kQuotes);
  ASSERT_EQ(set.quotes.size(), 4u);
  EXPECT_DOUBLE_EQ(set.quotes[1].price_per_gpu_hour, 1.6);  // per node-hour / 8
  const Workload w = test::profile_workload("llama-7b-zero1-2x8-h100.yaml");  // fits an A100 80GB
  const auto ranked = evaluate_quotes(set, w, builtin_presets(), "");
  ASSERT_EQ(ranked.size(), 4u);
  const QuoteResult* cheap = nullptr;
  const QuoteResult* fast = nullptr;
  for (const auto& r : ranked) {
    if (r.quote.name == "cheap") cheap = &r;
    if (r.quote.name == "fast") fast = &r;
  }
  ASSERT_TRUE(cheap && fast);
  EXPECT_DOUBLE_EQ(cheap->hours, 2000);
  EXPECT_DOUBLE_EQ(cheap->cost, 2000 * 16 * 1.0);
  // Same number of steps on each quote: hours scale with the step time.
  EXPECT_NEAR(fast->hours, 2000 * fast->step.step_us / cheap->step.step_us, 1e-9);
  EXPECT_NEAR(fast->cost, fast->hours * 16 * 1.6, 1e-6);
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    EXPECT_LE(ranked[i - 1].cost, ranked[i].cost);
    EXPECT_EQ(ranked[i].rank, static_cast<int>(i) + 1);
  }
  const std::string v = verdict(ranked, set.currency);
  EXPECT_EQ(v.rfind(ranked[0].quote.name + " wins: EUR", 0), 0u) << v;
  EXPECT_NE(v.find(ranked[1].quote.name), std::string::npos) << v;
}

// The README's story on the shipped example: 400G InfiniBand at 1.6x the
// price per GPU-hour finishes the H100 job cheaper than one 10GbE port per
// node, because 10GbE leaves most of each step waiting on the network.
TEST(Quotes, TheH100ExampleMatchesTheReadmesStory) {
  const QuoteSet set = load_quotes(std::string(FB_SOURCE_DIR) + "/profiles/quotes/h100-10gbe-vs-400g-ib.yaml");
  const auto ranked = evaluate_quotes(set, test::profile_workload("llama-7b-zero1-2x8-h100.yaml"), builtin_presets(), "");
  ASSERT_EQ(ranked.size(), 2u);
  const QuoteResult& ib = ranked[0];
  const QuoteResult& tengig = ranked[1];
  EXPECT_EQ(ib.quote.name, "vendor-b-400g-ib");
  EXPECT_EQ(tengig.quote.name, "vendor-a-10gbe");
  for (const auto& r : ranked) EXPECT_EQ(r.quote.gpu, "h100-sxm") << r.quote.name;  // as the workload's name says
  EXPECT_DOUBLE_EQ(ib.quote.price_per_gpu_hour / tengig.quote.price_per_gpu_hour, 1.6);
  EXPECT_GT(tengig.step.exposed_share, 0.5);
  EXPECT_LT(ib.step.exposed_share, 0.05);
  EXPECT_LT(ib.cost, 0.5 * tengig.cost);
  EXPECT_LT(ib.hours, 0.3 * tengig.hours);
}

TEST(Quotes, QuotesThatDoNotFitInMemoryRankLast) {
  const QuoteSet set = parse_quotes(R"(
job: {tokens: 10B}
quotes:
  - {name: small-cards, gpu: rtx-4090, gpus_per_node: 8, nodes: 2, network: 1x25gbe, price_per_gpu_hour: 0.3}
  - {name: big-cards, gpu: h100-sxm, gpus_per_node: 8, nodes: 2, network: 8x400g-ndr-ib, price_per_gpu_hour: 3}
)");
  const Workload w = test::profile_workload("llama-7b-zero1-2x8-h100.yaml");  // about 64 GiB per GPU
  const auto ranked = evaluate_quotes(set, w, builtin_presets(), "");
  EXPECT_EQ(ranked[0].quote.name, "big-cards");
  EXPECT_FALSE(ranked[1].memory.fits);
  EXPECT_NE(verdict(ranked, "USD").find("small-cards does not fit in memory"), std::string::npos);
  // The job: 10B tokens in 1M-token steps.
  EXPECT_NEAR(ranked[0].hours, std::ceil(10e9 / (1024 * 1024)) * ranked[0].step.step_us / 3.6e9, 1e-9);
}

TEST(Quotes, BadInputNamesTheQuote) {
  const auto error_of = [](const std::string& yaml) -> std::string {
    try {
      const auto set = parse_quotes(yaml);
      evaluate_quotes(set, test::profile_workload("ddp-7b-2x8-a100.yaml"), builtin_presets(), "");
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const std::string q = "quotes:\n  - {name: a, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, network: 1x10gbe, ";
  EXPECT_NE(error_of(q + "price_per_gpu_hour: 1, price_per_node_hour: 8}").find("quote 'a': give exactly one"),
            std::string::npos);
  EXPECT_NE(error_of(q + "price_per_gpu_hour: 1, billing: weekly}").find("allowed: hourly, monthly, spot"),
            std::string::npos);
  EXPECT_NE(error_of(q + "price_per_gpu_hour: 1, preemption_overhead: 0.1}").find("needs billing: spot"),
            std::string::npos);
  EXPECT_NE(error_of(q + "price_per_gpu_hour: 1, colour: red}").find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(error_of(q + "price_per_gpu_hour: 1}").find("job: missing"), std::string::npos);
  const std::string job = "job: {tokens: 1B}\n";
  EXPECT_NE(error_of(job + "quotes:\n  - {name: a, gpu: a100-80gb, gpus_per_node: 6, nodes: 2, network: 1x10gbe, "
                           "price_per_gpu_hour: 1}")
                .find("quote 'a': training: global_batch 512 is not a multiple of dp 12"),
            std::string::npos);
  EXPECT_NE(error_of(job + q + "price_per_gpu_hour: 1}\n  - {name: a, gpu: h100-sxm, gpus_per_node: 8, nodes: 1, "
                               "price_per_gpu_hour: 2}")
                .find("'a' appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(job + "quotes:\n  - {name: a, gpu: r100, gpus_per_node: 8, nodes: 2, network: 1x10gbe, "
                           "price_per_gpu_hour: 1}")
                .find("no such GPU preset 'r100'; known: a100-40gb"),
            std::string::npos);
  EXPECT_NE(error_of(job + "quotes:\n  - {name: a, gpu: a100-80gb, gpus_per_node: 8, nodes: 2, "
                           "price_per_gpu_hour: 1}")
                .find("2 nodes need a network"),
            std::string::npos);
}

}  // namespace
}  // namespace fb::model
