// `check --quote`: each shipped quote becomes its four hardware rules, each
// naming the quote and the preset key its figure came from; a quote naming
// an unknown preset or quote is refused naming it.
#include "check_quote.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "fabricbench/core/errors.hpp"

namespace fb::cli {
namespace {

namespace fs = std::filesystem;
using accept::HardwareItem;

bool quote_says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string quotes_file(const std::string& name) { return std::string(FB_SOURCE_DIR) + "/profiles/quotes/" + name; }

// The quote's hardware rules, as `check --quote` adds them to a profile.
std::vector<accept::Rule> rules_of(const std::string& file, const std::string& quote) {
  accept::Profile profile;
  add_quote_rules(file, quote, profile);
  std::vector<accept::Rule> hardware;
  for (auto& r : profile.rules)
    if (r.kind == accept::RuleKind::hardware) hardware.push_back(std::move(r));
  return hardware;
}

// Its busbw rule, added after the hardware rules, against `profile`'s sweeps.
accept::Rule busbw_of(const std::string& file, const std::string& quote, accept::Profile profile) {
  const std::size_t before = profile.rules.size();
  add_quote_rules(file, quote, profile);
  EXPECT_GT(profile.rules.size(), before);
  EXPECT_EQ(profile.rules.back().kind, accept::RuleKind::absolute) << profile.rules.back().name;
  return profile.rules.back();
}

accept::Profile shipped_profile(const std::string& name) {
  const std::string file = std::string(FB_SOURCE_DIR) + "/profiles/" + name;
  std::ifstream in(file);
  return accept::parse_profile(std::string(std::istreambuf_iterator<char>(in), {}), file);
}

accept::Profile profile_measuring(const std::string& scopes) {
  return accept::parse_profile("name: p\nbackend: nccl\nsweeps:\n  - {ops: [all_reduce], scopes: [" + scopes +
                                   "], minbytes: 1M, maxbytes: 256M, check: true}\nrules:\n  - {kind: correctness}\n",
                               "p.yaml");
}

TEST(CheckQuote, EveryShippedQuoteGivesItsPromises) {
  int quotes = 0;
  for (const auto& entry : fs::directory_iterator(std::string(FB_SOURCE_DIR) + "/profiles/quotes")) {
    const auto set = model::load_quotes(entry.path().string());
    for (const auto& q : set.quotes) {
      const auto rules = rules_of(entry.path().string(), q.name);
      // A one-node quote that names no network sells no NICs; an NVL72 quote
      // also sells its NVLink domain.
      const bool domain = q.gpu == "gb200" || q.gpu == "gb300";
      ASSERT_EQ(rules.size(), (q.network.empty() ? 3u : 4u) + (domain ? 1u : 0u)) << q.name;
      for (const auto& r : rules) {
        EXPECT_EQ(r.kind, accept::RuleKind::hardware);
        EXPECT_TRUE(quote_says(r.name, "quote " + q.name + ": ")) << r.name;
      }
      EXPECT_EQ(rules[1].hardware.count, q.gpus_per_node) << q.name;
      EXPECT_EQ(rules.back().hardware.count, q.nodes) << q.name;
      ++quotes;
    }
  }
  EXPECT_GE(quotes, 10);
}

TEST(CheckQuote, FiguresComeFromThePresetsAndSayWhich) {
  const auto ib = rules_of(quotes_file("h100-10gbe-vs-400g-ib.yaml"), "vendor-b-400g-ib");
  EXPECT_EQ(ib[0].hardware.item, HardwareItem::gpu);
  EXPECT_EQ(ib[0].hardware.gpu_names, std::vector<std::string>{"NVIDIA H100 80GB HBM3"});
  EXPECT_TRUE(quote_says(ib[0].name, "gpus.yaml h100-sxm nvml_names")) << ib[0].name;
  EXPECT_EQ(ib[2].hardware.item, HardwareItem::nics_per_node);
  EXPECT_EQ(ib[2].hardware.count, 8);
  EXPECT_DOUBLE_EQ(ib[2].hardware.nic_rate_gbit, 400);
  EXPECT_EQ(ib[2].hardware.nic_kinds, (std::vector<std::string>{"IB", "RoCE", "EFA"}));
  EXPECT_TRUE(quote_says(ib[2].name, "8 NICs per node at 400 Gbit/s (networks.yaml 400g-ndr-ib line rate)"))
      << ib[2].name;
  // A TCP network's ports are any kind at the rate.
  const auto tcp = rules_of(quotes_file("h100-10gbe-vs-400g-ib.yaml"), "vendor-a-10gbe");
  EXPECT_EQ(tcp[2].hardware.count, 1);
  EXPECT_DOUBLE_EQ(tcp[2].hardware.nic_rate_gbit, 10);
  EXPECT_TRUE(tcp[2].hardware.nic_kinds.empty());
}

TEST(CheckQuote, UnknownQuoteOrPresetIsRefusedNamingIt) {
  try {
    (void)rules_of(quotes_file("h100-10gbe-vs-400g-ib.yaml"), "vendor-z");
    ADD_FAILURE() << "an unknown quote name was accepted";
  } catch (const UsageError& e) {
    EXPECT_TRUE(quote_says(e.what(), "vendor-a-10gbe, vendor-b-400g-ib")) << e.what();
  }
  const auto set = model::parse_quotes(
      "quotes:\n  - {name: q, gpu: h100-sxm, gpus_per_node: 8, nodes: 2, network: 8x401g-ib, "
      "price_per_gpu_hour: 2}\n");
  try {
    (void)quote_rules(set, "q", model::builtin_presets(), "test.yaml");
    ADD_FAILURE() << "an unknown network preset was accepted";
  } catch (const UsageError& e) {
    EXPECT_TRUE(quote_says(e.what(), "401g-ib")) << e.what();
    EXPECT_TRUE(quote_says(e.what(), "400g-ndr-ib")) << e.what();  // the names it knows
  }
}

// An NVL72 quote sells its trays' NVLink domain: all its GPUs in one where
// it sells fewer than a rack, whole racks' worth where it sells more; an
// HGX quote's NVLink ends at the host and sells none.
TEST(CheckQuote, AnNvl72QuoteSellsItsNvlinkDomain) {
  const auto nvl72 = rules_of(quotes_file("todays-clusters.yaml"), "gb200-nvl72-4-trays");
  ASSERT_EQ(nvl72.size(), 5u);
  EXPECT_EQ(nvl72[3].hardware.item, HardwareItem::nvlink_domain);
  EXPECT_EQ(nvl72[3].hardware.count, 16);
  EXPECT_TRUE(quote_says(nvl72[3].name,
                         "quote gb200-nvl72-4-trays: its GPUs in NVLink domains of at least 16 GPUs "
                         "(nodes.yaml nvl72-tray-4 domain_gpus 72)"))
      << nvl72[3].name;
  const auto racks = model::parse_quotes(
      "quotes:\n  - {name: q, gpu: gb200, gpus_per_node: 4, nodes: 36, network: 4x400g-ndr-ib, "
      "price_per_gpu_hour: 2}\n");
  EXPECT_EQ(quote_rules(racks, "q", model::builtin_presets(), "test.yaml")[3].hardware.count, 72);
  for (const auto& r : rules_of(quotes_file("todays-clusters.yaml"), "b200-8x800g-xdr"))
    EXPECT_NE(r.hardware.item, HardwareItem::nvlink_domain) << r.name;
}

// The network's promise in bus bandwidth: the shipped H100 profile measures
// every rail up to 8 GiB, so 8 NDR NICs for 8 GPUs promise each rail 0.80 of
// one NIC's 50 GB/s there, the profile's own per-NIC floor.
TEST(CheckQuote, TheNetworkPromisesBusbwPerRailAtTheLargestSizeMeasured) {
  const auto ib =
      busbw_of(quotes_file("h100-10gbe-vs-400g-ib.yaml"), "vendor-b-400g-ib", shipped_profile("h100-8x-ndr400.yaml"));
  EXPECT_EQ(ib.rows.op, "all_reduce");
  EXPECT_EQ(ib.rows.scope, "rail");
  EXPECT_EQ(ib.rows.bytes, 8ull << 30);
  EXPECT_EQ(ib.metric, accept::Metric::busbw);
  ASSERT_EQ(ib.limits.size(), 1u);
  EXPECT_EQ(ib.limits[0].bound, accept::Bound::min);
  EXPECT_DOUBLE_EQ(ib.limits[0].value, 40.0);
  EXPECT_TRUE(quote_says(ib.name, "networks.yaml 400g-ndr-ib line_gbps 50")) << ib.name;
  // One 10GbE port for 8 GPUs: eight rails share it, an eighth of 1.25 GB/s each.
  const auto tcp =
      busbw_of(quotes_file("h100-10gbe-vs-400g-ib.yaml"), "vendor-a-10gbe", shipped_profile("h100-8x-ndr400.yaml"));
  EXPECT_EQ(tcp.rows.scope, "rail");
  EXPECT_NEAR(tcp.limits[0].value, 0.8 * 1.25 / 8, 1e-9);
}

// Without a rail sweep, one rank per node drives the NICs of one GPU (at
// least one NIC); where the profile measures nothing between nodes the
// promise is still a rule, which no row answers: not judged, a failure.
TEST(CheckQuote, WithoutRailsTheInterScopeCarriesThePromiseOrNothingAnswersIt) {
  const auto set = model::parse_quotes(
      "quotes:\n  - {name: q, gpu: h100-sxm, gpus_per_node: 8, nodes: 2, network: 1x10gbe, price_per_gpu_hour: 2}\n");
  const auto presets = model::builtin_presets();
  const auto inter = quote_busbw_rule(set, "q", presets, "test.yaml", profile_measuring("inter, global").sweeps);
  ASSERT_TRUE(inter);
  EXPECT_EQ(inter->rows.scope, "inter");
  EXPECT_EQ(inter->rows.bytes, 256ull << 20);
  EXPECT_DOUBLE_EQ(inter->limits[0].value, 0.8 * 1.25);
  const auto none = quote_busbw_rule(set, "q", presets, "test.yaml", profile_measuring("intra").sweeps);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->rows.scope, "inter");
  EXPECT_EQ(none->rows.bytes, 1ull << 30);
  EXPECT_TRUE(quote_says(none->name, "the profile's sweeps measure no all_reduce there")) << none->name;
  const auto one_node = model::parse_quotes(
      "quotes:\n  - {name: q, gpu: h100-sxm, gpus_per_node: 8, nodes: 1, network: 1x10gbe, price_per_gpu_hour: 2}\n");
  EXPECT_FALSE(quote_busbw_rule(one_node, "q", presets, "test.yaml", profile_measuring("inter").sweeps))
      << "one node sends nothing over its network";
}

// Four NVL72 trays are one NVLink domain: their rows between hosts run over
// NVLink, so no row shows the network they were sold with. Two racks' worth
// (36 trays of 4) cross the network between the domains.
TEST(CheckQuote, TraysOfOneNvlinkDomainPromiseNoNetworkBusbw) {
  const auto trays = model::parse_quotes(
      "quotes:\n  - {name: q, gpu: gb200, gpus_per_node: 4, nodes: 4, network: 4x400g-ndr-ib, "
      "price_per_gpu_hour: 5}\n");
  const auto presets = model::builtin_presets();
  EXPECT_FALSE(quote_busbw_rule(trays, "q", presets, "test.yaml", profile_measuring("rail").sweeps));
  const auto racks = model::parse_quotes(
      "quotes:\n  - {name: q, gpu: gb200, gpus_per_node: 4, nodes: 36, network: 4x400g-ndr-ib, "
      "price_per_gpu_hour: 5}\n");
  const auto between = quote_busbw_rule(racks, "q", presets, "test.yaml", profile_measuring("rail").sweeps);
  ASSERT_TRUE(between);
  EXPECT_EQ(between->rows.scope, "rail");
  EXPECT_DOUBLE_EQ(between->limits[0].value, 40.0);
}

}  // namespace
}  // namespace fb::cli
