// A profile: top-level keys, then its sweeps and rules (sweep_parse.cpp,
// rule_parse.cpp). Every error is an fb::UsageError naming the line.
#include "fabricbench/accept/profile.hpp"

#include <fmt/format.h>

#include <set>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "profile_parts.hpp"

namespace fb::accept {
namespace {

void parse_sweeps(const Field& root, const char* key, bool p2p, Profile& p) {
  const auto list = root.find(key);
  if (!list) return;
  std::size_t i = 0;
  for (const auto& item : list->items()) p.sweeps.push_back(parse_sweep(item, p2p, i++));
}

void parse_rules(const Field& root, Profile& p) {
  std::set<std::string> names;
  for (const auto& item : root["rules"].items()) {
    Rule r = parse_rule(item);
    check_rule_against_sweeps(r, item, p.sweeps);
    if (!names.insert(r.name).second)
      item.fail(
          fmt::format("a rule named '{}' already exists; rule names must differ (they name the JUnit "
                      "testcases)",
                      r.name));
    p.rules.push_back(std::move(r));
  }
  if (p.rules.empty()) root["rules"].fail("a profile needs at least one rule");
}

void check_consistency(const Field& root, const Profile& p) {
  bool checked = false;
  for (const auto& s : p.sweeps) checked = checked || s.options.check;
  for (const auto& r : p.rules) {
    if (r.kind == RuleKind::correctness && !checked)
      root["rules"].fail(fmt::format("rule '{}' (correctness) needs a sweep with check: true", r.name));
    if (r.kind == RuleKind::pairs && !p.pairs)
      root["rules"].fail(fmt::format("rule '{}' (pairs) needs a pairs: section that runs the pair matrix", r.name));
  }
  // Storage rules judge a `fabricbench storage --out` record (check --results):
  // a profile of storage rules alone runs nothing itself.
  if (p.sweeps.empty() && !p.pairs && !p.topo && !has_storage_rules(p))
    root.fail("the profile runs nothing: add sweeps, p2p, pairs or topo");
}

Profile parse_root(const Field& root) {
  root.expect_map({"name", "description", "source", "backend", "sweeps", "p2p", "topo", "pairs", "rules"});
  Profile p;
  p.name = root["name"].text();
  if (auto v = root.find("description")) p.description = v->text();
  if (auto v = root.find("source")) p.source = v->text();
  p.backend = root["backend"].text();
  parse_sweeps(root, "sweeps", false, p);
  parse_sweeps(root, "p2p", true, p);
  // topo: true | false. The inventory's own options belong to `fabricbench topo`.
  if (auto v = root.find("topo")) p.topo = v->boolean();
  if (auto v = root.find("pairs")) p.pairs = parse_pairs(*v);
  parse_rules(root, p);
  check_consistency(root, p);
  set_backend(p, p.backend);
  for (auto& s : p.sweeps) s.options.per_rank_times = needs_per_rank_times(p);
  return p;
}

}  // namespace

namespace {

Profile parse_text(std::string_view yaml_text) {
  if (yaml_text.size() > kMaxProfileBytes)
    throw UsageError(fmt::format("the profile is {} bytes; a profile is at most {} bytes of YAML", yaml_text.size(),
                                 kMaxProfileBytes));
  const Field root(load_yaml(yaml_text), "");
  try {
    return parse_root(root);
  } catch (const YAML::Exception& e) {
    // Conversions inside yaml-cpp: still bad input, never a crash.
    throw UsageError(fmt::format("profile: {}", e.what()));
  }
}

}  // namespace

Profile parse_profile(std::string_view yaml_text, std::string_view origin) {
  if (origin.empty()) return parse_text(yaml_text);
  try {
    return parse_text(yaml_text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", origin, e.what()));
  }
}

Profile load_profile(const std::string& path) {
  return parse_profile(read_input_file("--profile", path, {.max_bytes = kMaxProfileBytes}), path);
}

bool needs_per_rank_times(const Profile& profile) {
  for (const auto& r : profile.rules)
    if (r.kind == RuleKind::uniformity && r.across == Across::ranks) return true;
  return false;
}

bool has_storage_rules(const Profile& profile) {
  for (const auto& r : profile.rules)
    if (r.kind == RuleKind::storage) return true;
  return false;
}

bool needs_baseline(const Profile& profile) {
  for (const auto& r : profile.rules)
    if (r.kind == RuleKind::baseline) return true;
  return false;
}

void set_backend(Profile& profile, const std::string& backend) {
  profile.backend = backend;
  for (auto& s : profile.sweeps) s.options.backend = backend;
}

}  // namespace fb::accept
