#include "check_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fabric_health.hpp"
#include "fabricbench/accept/profile.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/output_file.hpp"
#include "run_options.hpp"

namespace fb::cli {

namespace fs = std::filesystem;

void add_check_flags(CLI::App& app, CheckFlags& f) {
  app.add_option("-p,--profile", f.profile, "acceptance profile: a YAML file, or a name from --list-profiles");
  app.add_flag("--list-profiles", f.list_profiles, "list the shipped profiles and exit");
  app.add_option("--quote", f.quote,
                 "quotes file (as for model quotes): also judge the cluster against what its quote sold: GPU model, "
                 "GPUs per node, NICs per node at the network's rate, nodes");
  app.add_option("--quote-name", f.quote_name, "which quote of the --quote file (needed when it holds several)");
  app.add_option("--results", f.results, "evaluate the rules on this results record instead of running");
  app.add_option("--baseline", f.baseline, "results record of an earlier good run, for baseline rules");
  app.add_option("--save-baseline", f.save_baseline, "also save this run's record here, to compare later runs with");
  app.add_option("--out-dir", f.out_dir, "folder for results.jsonl, check.json, junit.xml (default: check-<profile>)")
      ->check(output_path_validator());
  app.add_option("--backend", f.backend, "run the profile's sweeps on this backend instead of the profile's");
  app.add_flag("--strict", f.strict,
               "a rule that cannot be judged (size not measured, no inventory) is an error "
               "(exit 2) instead of a SKIP");
  app.add_flag("--allow-skipped", f.allow_skipped,
               "a rule the run cannot answer (a size not measured, no spec peak) is a SKIP; without it such a rule "
               "FAILs unless the profile marks it optional: true");
  app.add_flag("--overwrite", f.overwrite,
               "replace results.jsonl, check.json, junit.xml (and --save-baseline) when they exist; refused without it");
  app.add_flag("-q,--quiet", f.quiet, "no sweep table: the verdict table and messages only");
  app.add_flag("-v,--verbose", f.verbose, "debug logging from every rank");
  app.add_option("--progress", f.progress, "progress line on stderr: auto, on, off")->capture_default_str();
  add_counters_option(app, f.counters);
  add_timeout_option(app, f.timeout);
  add_inject_option(app, f.inject);
}

std::string profile_dir() { return find_profile_dir().path; }

std::string profile_path(const std::string& name_or_path) {
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".yaml"));
  std::error_code ec;
  if (looks_like_path || fs::is_regular_file(name_or_path, ec)) return name_or_path;
  return (fs::path(profile_dir()) / (name_or_path + ".yaml")).string();
}

std::string list_profiles() {
  const ProfileDir where = find_profile_dir();
  const std::string& dir = where.path;
  if (dir.empty()) throw UsageError("--list-profiles: no profile folder: " + where.from);
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  if (ec)
    throw UsageError(fmt::format("--list-profiles: cannot list the profile folder '{}' ({}): {}: reinstall "
                                 "fabricbench (cmake --install, or the .deb), or set FABRICBENCH_PROFILES to the "
                                 "folder",
                                 dir, where.from, ec.message()));
  std::sort(files.begin(), files.end());
  std::string out = fmt::format("profiles in {}:\n", dir);
  for (const auto& f : files) {
    std::string about;
    try {
      const auto p = accept::load_profile(f.string());
      about = fmt::format("{} [backend {}, {} rules]", p.description, p.backend, p.rules.size());
    } catch (const UsageError& e) {
      about = fmt::format("(does not parse: {})", e.what());
    }
    out += fmt::format("  {:<18} {}\n", f.stem().string(), about);
  }
  return out;
}

CheckOutputs check_outputs(const CheckFlags& flags, const std::string& profile_name) {
  CheckOutputs out;
  // The profile's name is free text: keep the default folder one plain name.
  std::string safe = profile_name;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  out.dir = flags.out_dir.empty() ? "check-" + safe : flags.out_dir;
  out.record = (fs::path(out.dir) / "results.jsonl").string();
  out.json = (fs::path(out.dir) / "check.json").string();
  out.junit = (fs::path(out.dir) / "junit.xml").string();
  return out;
}

std::string prepare_outputs(const CheckOutputs& out, const CheckFlags& flags) {
  std::error_code ec;
  fs::create_directories(out.dir, ec);
  if (ec) return fmt::format("--out-dir '{}': cannot create it: {}", out.dir, ec.message());
  if (auto err = check_output_dir(out.dir, "--out-dir"); !err.empty()) return err;
  std::vector<OutputPath> files{{out.json, "check.json"}, {out.junit, "junit.xml"}, {flags.save_baseline, "--save-baseline"}};
  if (flags.results.empty()) files.insert(files.begin(), {out.record, "results record"});
  return check_outputs(files, flags.overwrite);
}

}  // namespace fb::cli
