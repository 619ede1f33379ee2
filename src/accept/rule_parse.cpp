// One `rules:` entry -> Rule. Each kind has its own keys and the threshold
// forms it allows; anything else is refused with what is allowed.
#include <fmt/format.h>

#include <optional>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/types.hpp"
#include "fabricbench/topo/counters.hpp"
#include "profile_parts.hpp"

namespace fb::accept {
namespace {

const std::vector<std::string_view> kRowKeys = {"name", "kind", "optional", "op", "scope", "size", "placement", "datatype"};

std::vector<std::string_view> row_keys(std::vector<std::string_view> extra) {
  std::vector<std::string_view> keys = kRowKeys;
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
}

template <typename T, typename Parse>
std::string checked_name(const Field& f, Parse parse, const std::string& allowed) {
  const std::string text = f.text();
  const std::optional<T> v = parse(text);
  if (!v) f.fail(fmt::format("'{}' is unknown; allowed: {}", text, allowed));
  return std::string(name(*v));
}

// op, scope, size: required for rules that judge one row; filters for correctness.
void parse_rows(const Field& f, RowFilter& rows, bool required) {
  if (required || f.has("op")) rows.op = checked_name<Op>(f["op"], parse_op, allowed_ops());
  if (auto v = f.find("scope")) {
    rows.scope = checked_name<Scope>(*v, parse_scope, scope_names());
  } else if (required) {
    rows.scope = "global";
  }
  if (required || f.has("size")) rows.bytes = f["size"].bytes();
  if (auto v = f.find("placement")) {
    const std::string p = v->text();
    if (p == "out" || p == "in") {
      rows.in_place = p == "in";
    } else if (p != "any") {
      v->fail(fmt::format("'{}': use out, in or any", p));
    }
  }
  if (auto v = f.find("datatype")) rows.dtype = checked_name<Dtype>(*v, parse_dtype, allowed_dtypes());
}

Metric parse_metric_field(const Field& f, std::optional<Metric> fallback) {
  if (!f.has("metric") && fallback) return *fallback;
  const Field m = f["metric"];  // fails when required and absent
  const std::string text = m.text();
  const auto metric = parse_metric(text);
  if (!metric) m.fail(fmt::format("'{}' is unknown; allowed: {}", text, allowed_metrics()));
  return *metric;
}

std::string wanted_form(Dimension dimension, Reference reference) {
  switch (reference) {
    case Reference::spec:
      return "a fraction of the spec peak such as '0.80 of spec'";
    case Reference::baseline:
      return "a fraction of the baseline such as '0.95 of baseline'";
    case Reference::median:
      return "a multiple of the median such as '0.9 of median'";
    case Reference::none:
      break;
  }
  switch (dimension) {
    case Dimension::bandwidth:
      return "a bandwidth such as '40 GB/s'";
    case Dimension::time:
      return "a time such as '10 us'";
    case Dimension::percent:
      return "a percentage such as '5%'";
    case Dimension::relative:
      break;
  }
  return "a number with a unit";
}

struct LimitForm {
  Dimension dimension;
  Reference reference;
  bool min;
  bool max;
  // Also allowed: an absolute limit of this dimension (pairs: '40 GB/s').
  std::optional<Dimension> or_absolute = std::nullopt;
};

// Reads min and/or max and checks each against the form the rule allows.
void parse_limits(const Field& f, Rule& r, LimitForm form) {
  for (Bound b : {Bound::min, Bound::max}) {
    const char* key = b == Bound::min ? "min" : "max";
    const auto v = f.find(key);
    if (!v) continue;
    if (!(b == Bound::min ? form.min : form.max))
      v->fail(fmt::format("this {} rule takes {} only", name(r.kind), form.min ? "min" : "max"));
    Limit l;
    try {
      l = parse_limit(v->text(), b, "");
    } catch (const UsageError& e) {
      v->fail(e.what());
    }
    const bool as_form = l.dimension == form.dimension && l.reference == form.reference;
    const bool as_absolute =
        form.or_absolute && l.dimension == *form.or_absolute && l.reference == Reference::none;
    if (!as_form && !as_absolute)
      v->fail(fmt::format("'{}' does not fit this {} rule: write {}{}", l.text, name(r.kind),
                          wanted_form(form.dimension, form.reference),
                          form.or_absolute ? " or " + wanted_form(*form.or_absolute, Reference::none) : ""));
    r.limits.push_back(l);
  }
  // min above max: no measurement can pass, which reads as a bad link.
  if (r.limits.size() == 2 && r.limits[0].dimension == r.limits[1].dimension &&
      r.limits[0].reference == r.limits[1].reference && r.limits[0].value > r.limits[1].value)
    f.fail(fmt::format("min '{}' is above max '{}': no measurement can pass; swap them", r.limits[0].text,
                       r.limits[1].text));
  if (r.limits.empty())
    f.fail(fmt::format("a {} rule needs {}", name(r.kind),
                       form.min && form.max ? "min or max"
                       : form.min           ? "min"
                                            : "max"));
}

Dimension dimension_of(Metric m) { return is_time(m) ? Dimension::time : Dimension::bandwidth; }

void parse_uniformity(const Field& f, Rule& r) {
  const std::string across = f["across"].text();
  if (across == "inventory") {
    f.expect_map({"name", "kind", "optional", "across", "fields"});
    r.across = Across::inventory;
    if (auto v = f.find("fields")) {
      for (const auto& field : v->list()) {
        if (!is_inventory_field(field))
          v->fail(fmt::format("'{}' is unknown; allowed: {}", field, allowed_inventory_fields()));
        r.fields.push_back(field);
      }
    }
  } else if (across == "ranks") {
    f.expect_map(row_keys({"across", "max"}));
    r.across = Across::ranks;
    parse_rows(f, r.rows, true);
    parse_limits(f, r, {Dimension::relative, Reference::median, false, true});
  } else {
    f["across"].fail(fmt::format("'{}': use inventory (heterogeneity) or ranks (per-rank outliers)", across));
  }
}

void parse_pairs_rule(const Field& f, Rule& r) {
  f.expect_map({"name", "kind", "optional", "metric", "across", "min", "max"});
  if (auto m = f.find("metric")) {
    const auto pm = parse_pair_metric(m->text());
    if (!pm) m->fail(fmt::format("'{}' is unknown; allowed: unidir, bidir, latency", m->text()));
    r.pair_metric = *pm;
  }
  if (auto a = f.find("across")) {
    const auto pa = parse_pairs_across(a->text());
    if (!pa)
      a->fail(fmt::format("'{}': use links (each link against the median link) or nodes (each node's median link "
                          "against the other nodes')",
                          a->text()));
    r.pairs_across = *pa;
  }
  const bool latency = r.pair_metric == PairMetric::latency;
  // Relative to the median finds the odd link out; an absolute floor (the
  // NIC's rate) also fails a fabric whose links are all equally bad.
  parse_limits(f, r,
               {Dimension::relative, Reference::median, !latency, latency,
                latency ? Dimension::time : Dimension::bandwidth});
}

// Which storage lines (target, pattern, node count, mode, block) and which of
// their figures; the patterns and modes are the storage module's names.
void parse_storage_rule(const Field& f, Rule& r) {
  f.expect_map({"name", "kind", "optional", "target", "pattern", "nodes", "mode", "block", "metric", "min"});
  StorageFilter& s = r.storage;
  if (auto v = f.find("target")) {
    s.target = v->text();
    if (s.target != "path" && s.target != "local")
      v->fail(fmt::format("'{}': use path (the --path folder) or local (the --local folder)", s.target));
  }
  if (auto v = f.find("pattern")) {
    s.pattern = v->text();
    if (s.pattern != "seq_read" && s.pattern != "seq_write" && s.pattern != "small_read" &&
        s.pattern != "small_write")
      v->fail(fmt::format("'{}' is unknown; allowed: seq_read, seq_write, small_read, small_write", s.pattern));
  }
  if (auto v = f.find("nodes")) {
    if (v->node().IsScalar() && v->node().Scalar() == "all") {
      s.nodes.reset();
    } else {
      s.nodes = static_cast<int>(v->integer(1, 1 << 20));
    }
  }
  if (auto v = f.find("mode")) {
    s.mode = v->text();
    if (s.mode != "direct" && s.mode != "buffered" && s.mode != "any")
      v->fail(fmt::format("'{}': use direct (O_DIRECT), buffered or any", s.mode));
    if (s.mode == "any") s.mode.clear();
  }
  if (auto v = f.find("block")) s.block_bytes = v->bytes();
  if (auto m = f.find("metric")) {
    const auto sm = parse_storage_metric(m->text());
    if (!sm) m->fail(fmt::format("'{}' is unknown; allowed: aggregate_gbps, node_min_gbps", m->text()));
    r.storage_metric = *sm;
  }
  parse_limits(f, r, {Dimension::bandwidth, Reference::none, true, false});
}

// counters: which counter, the most a node's device may count, or only reported.
void parse_counters_rule(const Field& f, Rule& r) {
  const Field counter = f["counter"];
  r.counter = counter.text();
  if (r.counter != kTcpRetransmitsPerGb && !topo::find_counter(r.counter)) {
    std::string allowed;
    for (const auto& row : topo::counter_rows()) allowed += std::string(row.name) + ", ";
    counter.fail(fmt::format("'{}' is unknown; allowed: {}{}", r.counter, allowed, kTcpRetransmitsPerGb));
  }
  if (auto v = f.find("max")) r.counter_max = v->number(0, 1e18);
  if (auto v = f.find("informational")) r.informational = v->boolean();
}

void parse_kind_fields(const Field& f, Rule& r) {
  switch (r.kind) {
    case RuleKind::absolute:
      f.expect_map(row_keys({"metric", "min", "max"}));
      parse_rows(f, r.rows, true);
      r.metric = parse_metric_field(f, std::nullopt);
      parse_limits(f, r, {dimension_of(r.metric), Reference::none, true, true});
      break;
    case RuleKind::latency:
      f.expect_map(row_keys({"metric", "max"}));
      parse_rows(f, r.rows, true);
      r.metric = parse_metric_field(f, Metric::time_us);
      if (!is_time(r.metric)) f["metric"].fail("a latency rule reads a time: time_us, time_min_us, time_p99_us ...");
      parse_limits(f, r, {Dimension::time, Reference::none, false, true});
      break;
    case RuleKind::spec:
      f.expect_map(row_keys({"metric", "min", "max"}));
      parse_rows(f, r.rows, true);
      r.metric = parse_metric_field(f, Metric::busbw);
      if (is_time(r.metric)) f["metric"].fail("a spec rule compares a bandwidth with the path's peak: busbw or algbw");
      parse_limits(f, r, {Dimension::relative, Reference::spec, true, true});
      break;
    case RuleKind::baseline:
      f.expect_map(row_keys({"metric", "min", "max"}));
      parse_rows(f, r.rows, true);
      r.metric = parse_metric_field(f, std::nullopt);
      parse_limits(f, r, {Dimension::relative, Reference::baseline, true, true});
      break;
    case RuleKind::stability:
      f.expect_map(row_keys({"max"}));
      parse_rows(f, r.rows, true);
      parse_limits(f, r, {Dimension::percent, Reference::none, false, true});
      break;
    case RuleKind::correctness:
      f.expect_map(kRowKeys);
      parse_rows(f, r.rows, false);
      break;
    case RuleKind::uniformity:
      parse_uniformity(f, r);
      break;
    case RuleKind::pairs:
      parse_pairs_rule(f, r);
      break;
    case RuleKind::storage:
      parse_storage_rule(f, r);
      break;
    case RuleKind::smoothness:
      f.expect_map(row_keys({"max_jump", "max_drop", "from"}));
      parse_rows(f, r.rows, false);
      parse_smoothness(f, r);
      break;
    case RuleKind::mixed_gpus:
      f.expect_map({"name", "kind", "optional", "allow"});
      parse_mixed_gpus(f, r);
      break;
    case RuleKind::transport:
      f.expect_map(kRowKeys);
      parse_rows(f, r.rows, false);
      break;
    case RuleKind::shared_gpus:
      f.expect_map({"name", "kind", "optional"});
      break;
    case RuleKind::environment:
      f.expect_map({"name", "kind", "optional", "allow"});
      parse_environment_rule(f, r);
      break;
    case RuleKind::bimodal:
      f.expect_map(kRowKeys);
      parse_rows(f, r.rows, false);
      break;
    case RuleKind::hardware:
      f.expect_map({"name", "kind", "optional", "gpu", "gpus_per_node", "nics_per_node", "nic_rate", "nic_kind",
                    "nodes", "nvlink_domain"});
      parse_hardware(f, r);
      break;
    case RuleKind::counters:
      f.expect_map({"name", "kind", "optional", "counter", "max", "informational"});
      parse_counters_rule(f, r);
      break;
  }
}

// "absolute all_reduce/inter 1 GiB busbw" when the profile gives no name.
std::string default_name(const Rule& r) {
  std::string n(name(r.kind));
  if (!r.rows.op.empty()) n += " " + r.rows.op;
  if (!r.rows.scope.empty()) n += "/" + r.rows.scope;
  if (r.rows.bytes) n += " " + format_bytes(*r.rows.bytes);
  if (r.kind == RuleKind::absolute || r.kind == RuleKind::baseline || r.kind == RuleKind::latency)
    n += " " + std::string(name(r.metric));
  if (r.kind == RuleKind::uniformity) n += r.across == Across::inventory ? " inventory" : " ranks";
  if (r.kind == RuleKind::pairs) n += " " + std::string(name(r.pair_metric));
  if (r.kind == RuleKind::pairs && r.pairs_across == PairsAcross::nodes) n += " nodes";
  if (r.kind == RuleKind::counters) n += " " + r.counter;
  if (r.kind == RuleKind::storage)
    n += fmt::format(" {} {} at {} nodes {}", r.storage.target, r.storage.pattern,
                     r.storage.nodes ? std::to_string(*r.storage.nodes) : "all", name(r.storage_metric));
  return n;
}

}  // namespace

Rule parse_rule(const Field& f) {
  if (!f.node().IsMap()) f.fail("expected a mapping of keys (kind: ..., op: ...)");
  Rule r;
  r.line = f.line();
  const Field kind = f["kind"];
  const auto k = parse_rule_kind(kind.text());
  if (!k) kind.fail(fmt::format("'{}' is unknown; allowed: {}", kind.text(), allowed_rule_kinds()));
  r.kind = *k;
  // Name the rule in messages from here on, when it has a name.
  const Field named = f.has("name") ? Field(f.node(), fmt::format("{} '{}'", f.where(), f["name"].text())) : f;
  parse_kind_fields(named, r);
  r.name = f.has("name") ? f["name"].text() : default_name(r);
  // A rule that may legitimately not be judged where the profile runs (a
  // spec peak host memory does not have): its SKIP does not fail the check.
  if (f.has("optional")) r.optional = named["optional"].boolean();
  return r;
}

void check_rule_against_sweeps(const Rule& rule, const Field& f, const std::vector<Sweep>& sweeps) {
  if (rule.rows.op.empty()) return;
  bool op_runs = false;
  for (const auto& s : sweeps) {
    for (Op op : s.options.ops) {
      if (name(op) != rule.rows.op) continue;
      op_runs = true;
      for (Scope scope : s.options.scopes)
        if (rule.rows.scope.empty() || name(scope) == rule.rows.scope) return;
    }
  }
  if (!op_runs) f.fail(fmt::format("op {}: no sweep of this profile runs it; add it to a sweep's ops", rule.rows.op));
  f.fail(fmt::format("scope {}: no sweep of this profile runs {} at that scope; add it to the sweep's scopes",
                     rule.rows.scope, rule.rows.op));
}

}  // namespace fb::accept
