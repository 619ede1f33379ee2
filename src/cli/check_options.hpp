// `fabricbench check` flags, where profiles are found, and where outputs go.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace fb::cli {

struct CheckFlags {
  std::string profile;  // a path, or a name from --list-profiles
  bool list_profiles = false;
  std::string quote;       // a quotes file: its quote's promises join the profile's rules (check_quote.hpp)
  std::string quote_name;  // which quote of the file ("" when it holds one)
  std::string results;  // evaluate this record instead of running
  std::string baseline;
  std::string save_baseline;
  std::string out_dir;  // default: check-<profile name>
  std::string backend;  // overrides the profile's backend
  bool strict = false;
  bool allow_skipped = false;  // a rule that cannot be judged is a SKIP, not a FAIL, even when not optional
  bool overwrite = false;      // replace the outputs of an earlier check in --out-dir
  bool quiet = false;
  bool verbose = false;
  std::string progress = "auto";
  std::string counters = "/";    // --counters: where error counters are read, or off (fabric_health.hpp)
  std::string timeout = "auto";  // the hang watchdog's limit (run_options.hpp)
  std::vector<std::string> inject;  // test only
};

void add_check_flags(CLI::App& app, CheckFlags& flags);

// The shipped profiles' folder and where that answer came from: $FABRICBENCH_PROFILES,
// else for the build tree's binary the source tree's profiles/, else the
// installed share/fabricbench/profiles beside the binary (profile_dir.cpp).
struct ProfileDir {
  std::string path;  // "" when it cannot be known
  std::string from;  // why this folder (or why none), for messages
};
ProfileDir find_profile_dir();
std::string profile_dir();
// A path as given when it names a file or ends in .yaml; else <profile_dir>/<name>.yaml.
std::string profile_path(const std::string& name_or_path);
// "name  description" per profile directly in profile_dir() (subfolders hold
// presets, workloads and quotes, not acceptance profiles). Throws UsageError
// when the folder cannot be listed.
std::string list_profiles();

// The files a check writes in its output folder.
struct CheckOutputs {
  std::string dir;
  std::string record;  // results.jsonl (not written with --results)
  std::string json;    // check.json
  std::string junit;   // junit.xml
};
CheckOutputs check_outputs(const CheckFlags& flags, const std::string& profile_name);
// Creates the folder, checks no other user can plant files in it, and that
// every output can be written (none exists unless --overwrite): "" or the problem.
[[nodiscard]] std::string prepare_outputs(const CheckOutputs& out, const CheckFlags& flags);

}  // namespace fb::cli
