// Acceptance profiles: what `fabricbench check` runs (sweeps, point-to-point
// sweeps, the inventory, the pair matrix) and the rules it then evaluates.
// Schema and examples: docs/acceptance.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/accept/rule.hpp"
#include "fabricbench/core/plan.hpp"

namespace fb::accept {

// One sweep of the profile, run by the engine as one fb::Runner.
struct Sweep {
  std::string name;  // "sweeps[0]" unless the profile names it
  RunOptions options;
};

// The node-pair matrix (`fabricbench pairs`), as the profile asks for it.
struct PairsPlan {
  std::uint64_t size_bytes = 1ull << 30;
  int iters = 10;
  double time_budget_s = 0;
  bool rails = false;
};

struct Profile {
  std::string name;
  std::string description;
  std::string source;         // where its thresholds come from
  std::string backend;        // data plane of every sweep
  std::vector<Sweep> sweeps;  // `sweeps:` then `p2p:`, in the profile's order
  bool topo = false;          // record the inventory (topo) in the run
  std::optional<PairsPlan> pairs;
  std::vector<Rule> rules;
};

// Largest profile text accepted (a profile is a page of YAML, not a data file).
inline constexpr std::size_t kMaxProfileBytes = 1 << 20;

// Parses and validates a profile. Throws fb::UsageError naming the line, the
// key and what is allowed, prefixed with `origin` (the file, or "" for none);
// never anything else, whatever the input (this is the fuzzing entry point).
Profile parse_profile(std::string_view yaml_text, std::string_view origin = {});

// Reads `path` and parses it; messages start with the path.
Profile load_profile(const std::string& path);

// Rules of these kinds need per-rank times in the record (RunOptions::per_rank_times).
bool needs_per_rank_times(const Profile& profile);
bool needs_baseline(const Profile& profile);
// Storage rules read `storage` lines, which only `fabricbench storage` writes:
// such a profile is judged with `check --results`, never run by check itself.
bool has_storage_rules(const Profile& profile);

// Replaces the backend of the profile and of every sweep (`check --backend`).
void set_backend(Profile& profile, const std::string& backend);

}  // namespace fb::accept
