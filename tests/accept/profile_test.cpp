// Profile and rule parsing: every rule kind, thresholds with units, and the
// messages bad profiles get (fb::UsageError naming the line and the key).
#include "fabricbench/accept/profile.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "fabricbench/core/errors.hpp"
#include "record_builder.hpp"

namespace fb::accept {
namespace {

using test::profile_with_rules;

std::string error_of(const std::string& yaml) {
  try {
    parse_profile(yaml);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string rule_error(const std::string& rules_yaml) { return error_of(test::profile_text_with_rules(rules_yaml)); }

TEST(Limit, BandwidthUnitsAreDecimalBytesPerSecond) {
  EXPECT_DOUBLE_EQ(parse_limit("40 GB/s", Bound::min, "t").value, 40);
  EXPECT_DOUBLE_EQ(parse_limit("400 Gbit/s", Bound::min, "t").value, 50);
  EXPECT_DOUBLE_EQ(parse_limit("250 MB/s", Bound::min, "t").value, 0.25);
  EXPECT_DOUBLE_EQ(parse_limit("1.5 TB/s", Bound::min, "t").value, 1500);
  EXPECT_NEAR(parse_limit("1 GiB/s", Bound::min, "t").value, 1.073741824, 1e-12);
  EXPECT_EQ(parse_limit("40GB/s", Bound::min, "t").dimension, Dimension::bandwidth);
}

TEST(Limit, TimesPercentagesAndFractions) {
  EXPECT_DOUBLE_EQ(parse_limit("10 us", Bound::max, "t").value, 10);
  EXPECT_DOUBLE_EQ(parse_limit("2 ms", Bound::max, "t").value, 2000);
  EXPECT_DOUBLE_EQ(parse_limit("500 ns", Bound::max, "t").value, 0.5);
  EXPECT_DOUBLE_EQ(parse_limit("3 \xC2\xB5s", Bound::max, "t").value, 3);
  const Limit pct = parse_limit("5%", Bound::max, "t");
  EXPECT_EQ(pct.dimension, Dimension::percent);
  EXPECT_DOUBLE_EQ(pct.value, 0.05);
  const Limit spec = parse_limit("0.80 of spec", Bound::min, "t");
  EXPECT_EQ(spec.reference, Reference::spec);
  EXPECT_DOUBLE_EQ(spec.value, 0.8);
  EXPECT_EQ(parse_limit("0.95 of baseline", Bound::min, "t").reference, Reference::baseline);
  EXPECT_EQ(parse_limit("1.5 of median", Bound::max, "t").reference, Reference::median);
  EXPECT_EQ(parse_limit(" 40 GB/s ", Bound::min, "t").text, "40 GB/s");
}

TEST(Limit, RefusesWhatCannotBeRead) {
  auto message = [](const char* text) {
    try {
      parse_limit(text, Bound::min, "min");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("40").find("has no unit"), std::string::npos);
  EXPECT_NE(message("40 gb/s").find("ambiguous"), std::string::npos);
  EXPECT_NE(message("40 gbps").find("ambiguous"), std::string::npos);
  EXPECT_NE(message("40 furlongs").find("unknown unit 'furlongs'"), std::string::npos);
  EXPECT_NE(message("-3 GB/s").find("negative"), std::string::npos);
  EXPECT_NE(message("GB/s").find("no number"), std::string::npos);
  EXPECT_NE(message("0.8 of quote").find("spec, baseline or median"), std::string::npos);
  EXPECT_NE(message("1e999 GB/s").find("not finite"), std::string::npos);
}

TEST(Profile, ParsesEveryRuleKind) {
  const Profile p = profile_with_rules(R"(
  - {kind: absolute, op: all_reduce, scope: inter, size: 1G, metric: busbw, min: 40 GB/s}
  - {kind: spec, op: all_reduce, scope: intra, size: 1G, min: 0.80 of spec}
  - {kind: baseline, op: all_reduce, size: 1G, metric: time_us, max: 1.10 of baseline}
  - {kind: latency, op: sendrecv, size: 8, max: 10 us}
  - {kind: stability, op: all_reduce, size: 1M, max: 5%, placement: out}
  - {kind: correctness}
  - {kind: uniformity, across: ranks, op: all_reduce, scope: intra, size: 1G, max: 1.5 of median}
  - {kind: uniformity, across: inventory, fields: [gpus, driver]}
  - {kind: pairs, metric: bidir, min: 0.9 of median}
  - {kind: pairs, metric: unidir, across: nodes, min: 0.5 of median}
)");
  ASSERT_EQ(p.rules.size(), 10u);
  const Rule& abs = p.rules[0];
  EXPECT_EQ(abs.kind, RuleKind::absolute);
  EXPECT_EQ(abs.rows.op, "all_reduce");
  EXPECT_EQ(abs.rows.scope, "inter");
  EXPECT_EQ(abs.rows.bytes, 1ull << 30);
  EXPECT_EQ(abs.metric, Metric::busbw);
  ASSERT_EQ(abs.limits.size(), 1u);
  EXPECT_EQ(abs.limits[0].bound, Bound::min);
  EXPECT_DOUBLE_EQ(abs.limits[0].value, 40);
  EXPECT_EQ(abs.name, "absolute all_reduce/inter 1 GiB busbw");
  EXPECT_EQ(p.rules[1].limits[0].reference, Reference::spec);
  EXPECT_EQ(p.rules[1].metric, Metric::busbw);  // the default for spec rules
  EXPECT_EQ(p.rules[2].rows.scope, "global");   // the default scope
  EXPECT_EQ(p.rules[2].limits[0].bound, Bound::max);
  EXPECT_EQ(p.rules[3].metric, Metric::time_us);
  EXPECT_DOUBLE_EQ(p.rules[4].limits[0].value, 0.05);
  EXPECT_EQ(p.rules[4].rows.in_place, std::optional<bool>(false));
  EXPECT_TRUE(p.rules[5].rows.op.empty());
  EXPECT_EQ(p.rules[6].across, Across::ranks);
  EXPECT_EQ(p.rules[7].across, Across::inventory);
  EXPECT_EQ(p.rules[7].fields, (std::vector<std::string>{"gpus", "driver"}));
  EXPECT_EQ(p.rules[8].pair_metric, PairMetric::bidir);
  EXPECT_EQ(p.rules[8].pairs_across, PairsAcross::links);  // the default
  EXPECT_EQ(p.rules[9].pairs_across, PairsAcross::nodes);
  EXPECT_EQ(p.rules[9].name, "pairs unidir nodes");
  EXPECT_TRUE(needs_per_rank_times(p));
  EXPECT_TRUE(needs_baseline(p));
  for (const auto& s : p.sweeps) EXPECT_TRUE(s.options.per_rank_times);
}

TEST(Profile, SweepsBecomeEngineOptions) {
  const Profile p = parse_profile(R"(
name: t
backend: mpi
sweeps:
  - name: big
    ops: all_reduce, all_gather
    scopes: [intra, inter]
    minbytes: 1K
    maxbytes: 1G
    stepfactor: 4
    iters: 7
    warmup: 1
    check: true
    datatype: bf16
    placement: out
    time_budget_s: 0.5
p2p:
  - ops: [pingpong]
    peers: [2, 0]
    window: 16
topo: true
pairs: {size: 256M, iters: 5, rails: true}
rules:
  - {kind: absolute, op: all_gather, scope: inter, size: 1G, metric: algbw, min: 1 GB/s, max: 1 TB/s}
)");
  ASSERT_EQ(p.sweeps.size(), 2u);
  const RunOptions& o = p.sweeps[0].options;
  EXPECT_EQ(p.sweeps[0].name, "big");
  EXPECT_EQ(o.ops, (std::vector<Op>{Op::all_reduce, Op::all_gather}));
  EXPECT_EQ(o.scopes, (std::vector<Scope>{Scope::intra, Scope::inter}));
  EXPECT_EQ(o.grid.min_bytes, 1024u);
  EXPECT_EQ(o.grid.max_bytes, 1ull << 30);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 1);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.dtype, Dtype::bfloat16);
  EXPECT_FALSE(o.in_place);
  EXPECT_EQ(o.backend, "mpi");
  EXPECT_FALSE(o.per_rank_times);
  const RunOptions& q = p.sweeps[1].options;
  EXPECT_EQ(p.sweeps[1].name, "p2p[0]");
  EXPECT_EQ(q.ops, std::vector<Op>{Op::pingpong});
  EXPECT_EQ(q.peer_a, 2);
  EXPECT_EQ(q.peer_b, 0);
  EXPECT_EQ(q.window, 16);
  EXPECT_TRUE(p.topo);
  ASSERT_TRUE(p.pairs);
  EXPECT_EQ(p.pairs->size_bytes, 256u << 20);
  EXPECT_TRUE(p.pairs->rails);
  EXPECT_EQ(p.rules[0].limits.size(), 2u);
}

TEST(Profile, BackendCanBeReplaced) {
  Profile p = profile_with_rules("  - {kind: correctness}\n");
  set_backend(p, "nccl");
  EXPECT_EQ(p.backend, "nccl");
  for (const auto& s : p.sweeps) EXPECT_EQ(s.options.backend, "nccl");
}

struct BadRule {
  const char* name;
  const char* rules;
  const char* message;
};
void PrintTo(const BadRule& b, std::ostream* os) { *os << b.rules; }

class BadRules : public ::testing::TestWithParam<BadRule> {};

// `optional: true` on any kind of rule; absent means required.
TEST(Profile, RulesMayBeMarkedOptional) {
  const Profile p = test::profile_with_rules(
      "  - {kind: spec, op: all_reduce, size: 1G, min: 0.8 of spec, optional: true}\n"
      "  - {kind: uniformity, across: inventory, optional: false}\n"
      "  - {kind: pairs, min: 0.9 of median, optional: true}\n"
      "  - {kind: correctness}\n");
  ASSERT_EQ(p.rules.size(), 4u);
  EXPECT_TRUE(p.rules[0].optional);
  EXPECT_FALSE(p.rules[1].optional);
  EXPECT_TRUE(p.rules[2].optional);
  EXPECT_FALSE(p.rules[3].optional);
}

// The shipped profiles mark exactly the rules that skip where they are meant
// to run (docs/acceptance.md): spec peaks host memory lacks, the network on one node.
TEST(Profile, ShippedProfilesMarkTheRulesThatMaySkip) {
  const auto optional_rules = [](const std::string& name) {
    std::vector<std::string> out;
    for (const auto& r : load_profile(std::string(FB_SOURCE_DIR) + "/profiles/" + name + ".yaml").rules)
      if (r.optional) out.push_back(r.name);
    return out;
  };
  EXPECT_EQ(optional_rules("local-smoke"), std::vector<std::string>{"all_reduce 1 MiB near the path's peak"});
  EXPECT_EQ(optional_rules("generic-spec"),
            (std::vector<std::string>{"inter-node all_reduce at 1 GiB", "every rail at 1 GiB"}));
  EXPECT_TRUE(optional_rules("h100-8x-ndr400").empty());
  EXPECT_TRUE(optional_rules("a100-8x-hdr200").empty());
  EXPECT_TRUE(optional_rules("pcie-gpus-25gbe").empty());
  EXPECT_TRUE(optional_rules("host-tcp").empty());  // on one node its pairs rule fails: it checks a network
}

TEST_P(BadRules, AreRefusedWithTheReason) {
  const std::string e = rule_error(GetParam().rules);
  EXPECT_NE(e.find(GetParam().message), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadRules,
    ::testing::Values(
        BadRule{"UnknownKey", "  - {kind: absolute, op: all_reduce, size: 1G, metric: busbw, mni: 4 GB/s}",
                "unknown key 'mni'"},
        BadRule{"OptionalNotABoolean",
                "  - {kind: spec, op: all_reduce, size: 1G, min: 0.8 of spec, optional: maybe}",
                "'maybe': use true or false"},
        BadRule{"UnknownOp", "  - {kind: absolute, op: all_reduc, size: 1G, metric: busbw, min: 4 GB/s}",
                "'all_reduc' is unknown"},
        BadRule{"UnknownMetric", "  - {kind: absolute, op: all_reduce, size: 1G, metric: goodput, min: 4 GB/s}",
                "'goodput' is unknown"},
        BadRule{"UnknownKind", "  - {kind: vibes, op: all_reduce}", "'vibes' is unknown"},
        // Issue 35: accepted, and then failed every row as if the link were bad.
        BadRule{"MinAboveMax",
                "  - {kind: absolute, op: all_reduce, size: 1G, metric: busbw, min: 40 GB/s, max: 200 Gbps}",
                "min '40 GB/s' is above max '200 Gbps': no measurement can pass; swap them"},
        BadRule{"PairsAcrossRacks", "  - {kind: pairs, across: racks, min: 0.5 of median}",
                "'racks': use links (each link against the median link) or nodes"},
        BadRule{"UnknownUnit", "  - {kind: absolute, op: all_reduce, size: 1G, metric: busbw, min: 4 GB/h}",
                "unknown unit 'GB/h'"},
        BadRule{"NoUnit", "  - {kind: absolute, op: all_reduce, size: 1G, metric: busbw, min: 40}", "has no unit"},
        BadRule{"TimeForBandwidth", "  - {kind: absolute, op: all_reduce, size: 1G, metric: busbw, min: 10 us}",
                "write a bandwidth"},
        BadRule{"BandwidthForTime", "  - {kind: latency, op: sendrecv, size: 8, max: 10 GB/s}", "write a time"},
        BadRule{"LatencyWithMin", "  - {kind: latency, op: sendrecv, size: 8, min: 10 us}", "unknown key 'min'"},
        BadRule{"SpecOnTime", "  - {kind: spec, op: all_reduce, size: 1G, metric: time_us, min: 0.8 of spec}",
                "busbw or algbw"},
        BadRule{"SpecAbsolute", "  - {kind: spec, op: all_reduce, size: 1G, min: 40 GB/s}", "0.80 of spec"},
        BadRule{"StabilityNoPercent", "  - {kind: stability, op: all_reduce, size: 1G, max: 0.05}", "has no unit"},
        BadRule{"MissingSize", "  - {kind: absolute, op: all_reduce, metric: busbw, min: 4 GB/s}",
                "'size' is required"},
        BadRule{"AmbiguousSize", "  - {kind: absolute, op: all_reduce, size: 1GB, metric: busbw, min: 4 GB/s}",
                "ambiguous"},
        BadRule{"NoBound", "  - {kind: absolute, op: all_reduce, size: 1G, metric: busbw}", "needs min or max"},
        BadRule{"OpNotSwept", "  - {kind: absolute, op: reduce, size: 1G, metric: busbw, min: 1 GB/s}",
                "no sweep of this profile runs it"},
        BadRule{"AcrossWhat", "  - {kind: uniformity, across: galaxies}", "inventory (heterogeneity) or ranks"},
        BadRule{"InventoryField", "  - {kind: uniformity, across: inventory, fields: [colour]}", "'colour' is unknown"},
        BadRule{"PairsLatencyMin", "  - {kind: pairs, metric: latency, min: 0.5 of median}", "takes max only"},
        BadRule{"PairsBandwidthInTime", "  - {kind: pairs, metric: unidir, min: 10 us}",
                "'0.9 of median' or a bandwidth such as '40 GB/s'"},
        BadRule{"PairsLatencyInBandwidth", "  - {kind: pairs, metric: latency, max: 10 GB/s}",
                "or a time such as '10 us'"},
        BadRule{"DuplicateName", "  - {name: a, kind: correctness}\n  - {name: a, kind: correctness}",
                "already exists"},
        BadRule{"DuplicateKey", "  - kind: correctness\n    kind: correctness", "given twice"},
        BadRule{"RuleNotAMap", "  - correctness", "expected a mapping"}),
    [](const auto& info) { return info.param.name; });

TEST(Profile, ErrorsNameTheLineAndTheRule) {
  const std::string e = error_of(
      "name: t\nbackend: mpi\nsweeps:\n  - ops: [all_reduce]\nrules:\n"
      "  - name: busbw floor\n    kind: absolute\n    op: all_reduce\n    size: 1G\n    metric: busbw\n"
      "    min: 40 gb/s\n");
  EXPECT_NE(e.find("line 11"), std::string::npos) << e;
  EXPECT_NE(e.find("'busbw floor'"), std::string::npos) << e;
  EXPECT_NE(e.find("Gbit/s"), std::string::npos) << e;
}

TEST(Profile, MalformedYamlAndWrongShapes) {
  EXPECT_NE(error_of("name: [unclosed\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(error_of("name: t\n  bad indent: 1\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(error_of("").find("a profile is a mapping"), std::string::npos);
  // A second document after '---' was dropped without a word, with its rules.
  const std::string two = error_of("name: t\nbackend: mpi\nrules: []\n---\nname: u\n");
  EXPECT_NE(two.find("more than one YAML document"), std::string::npos) << two;
  EXPECT_NE(error_of("just a scalar").find("a profile is a mapping"), std::string::npos);
  EXPECT_NE(error_of("name: t\nbackend: mpi\nrules: 3\n").find("expected a list"), std::string::npos);
  EXPECT_NE(error_of("name: t\nbackend: mpi\ncolour: blue\nrules: []\n").find("unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of("backend: mpi\nrules: []\n").find("'name' is required"), std::string::npos);
  EXPECT_NE(error_of("name: t\nbackend: mpi\nsweeps: [{ops: [all_reduce]}]\nrules: []\n").find("at least one rule"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kMaxProfileBytes + 1, '#')).find("at most"), std::string::npos);
  // Deep nesting is refused by the parser's depth guard, not by a stack overflow.
  EXPECT_NE(error_of("name: " + std::string(100000, '[')).find("YAML"), std::string::npos);
}

TEST(Profile, SweepErrors) {
  const std::string head = "name: t\nbackend: mpi\n";
  const std::string tail = "rules:\n  - {kind: correctness}\n";
  EXPECT_NE(error_of(head + "sweeps:\n  - {ops: [pingpong], check: true}\n" + tail).find("list it under p2p"),
            std::string::npos);
  EXPECT_NE(error_of(head + "p2p:\n  - {ops: [all_reduce], check: true}\n" + tail).find("list it under sweeps"),
            std::string::npos);
  EXPECT_NE(error_of(head + "sweeps:\n  - {minbytes: 1M, maxbytes: 1K, check: true}\n" + tail).find("below minbytes"),
            std::string::npos);
  EXPECT_NE(error_of(head + "sweeps:\n  - {scopes: [sideways], check: true}\n" + tail).find("'sideways' is unknown"),
            std::string::npos);
  EXPECT_NE(error_of(head + "sweeps:\n  - {iters: 0, check: true}\n" + tail).find("out of range"), std::string::npos);
  EXPECT_NE(error_of(head + "sweeps:\n  - {check: maybe}\n" + tail).find("true or false"), std::string::npos);
  EXPECT_NE(error_of(head + "p2p:\n  - {peers: [1, 1], check: true}\n" + tail).find("two different ranks"),
            std::string::npos);
  // A correctness rule with nothing checked could never be judged.
  EXPECT_NE(error_of(head + "sweeps:\n  - {ops: [all_reduce]}\n" + tail).find("check: true"), std::string::npos);
  EXPECT_NE(error_of(head + "rules:\n  - {kind: uniformity, across: inventory}\n").find("runs nothing"),
            std::string::npos);
}

TEST(Profile, EveryShippedProfileParses) {
  int found = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FB_SOURCE_DIR) + "/profiles")) {
    if (e.path().extension() != ".yaml") continue;
    ++found;
    SCOPED_TRACE(e.path().string());
    Profile p;
    ASSERT_NO_THROW(p = load_profile(e.path().string()));
    EXPECT_EQ(p.name, e.path().stem().string());
    EXPECT_FALSE(p.source.empty());
    EXPECT_FALSE(p.rules.empty());
  }
  EXPECT_GE(found, 5);
}

TEST(Profile, MessagesStartWithTheOriginGiven) {
  const std::string text = test::profile_text_with_rules("  - {kind: latency, op: sendrecv, size: 8, max: 10 parsecs}\n");
  try {
    parse_profile(text, "site/acceptance.yaml");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("site/acceptance.yaml: ", 0), 0u) << what;
    EXPECT_NE(what.find("unknown unit 'parsecs'"), std::string::npos) << what;
  }
  // No origin: the message is the parser's own, with its line number.
  const std::string bare = rule_error("  - {kind: latency, op: sendrecv, size: 8, max: 10 parsecs}\n");
  EXPECT_EQ(bare.find("site/acceptance.yaml"), std::string::npos) << bare;
  EXPECT_NE(bare.find("line "), std::string::npos) << bare;
  EXPECT_NO_THROW(parse_profile(test::profile_text_with_rules("  - {kind: correctness}\n"), "ok.yaml"));
}

// Cut and corrupted shipped profiles: every outcome is a profile or a
// UsageError (the contract a fuzz harness relies on), never another
// exception or a crash. Deterministic: every 11th cut, fixed bytes.
TEST(Profile, DamagedProfilesGiveUsageErrorsOnly) {
  int refused = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FB_SOURCE_DIR) + "/profiles")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t at = 0; at < text.size(); at += 11) {
      for (const std::string& damaged : {text.substr(0, at), text.substr(0, at) + "\x01\xff[" + text.substr(at),
                                         text.substr(0, at) + ": {" + text.substr(at + 1)}) {
        try {
          parse_profile(damaged, e.path().filename().string());
        } catch (const UsageError& u) {
          ++refused;
          ASSERT_EQ(std::string(u.what()).rfind(e.path().filename().string() + ": ", 0), 0u) << u.what();
        } catch (const std::exception& other) {
          FAIL() << e.path() << " cut at " << at << ": " << other.what();
        }
      }
    }
  }
  EXPECT_GT(refused, 1000);  // most damage is refused; some cuts land between rules
}

TEST(Profile, LoadNamesTheFile) {
  try {
    load_profile("/nonexistent/p.yaml");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/p.yaml"), std::string::npos);
  }
}

}  // namespace
}  // namespace fb::accept
