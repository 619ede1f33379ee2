// `fabricbench topo`: every rank reads its inventory, rank 0 prints the report
// (per node: GPUs, NVLink, PCIe, NICs, rails, paths and their spec peaks, then
// the differences between nodes) and writes the record with --out.
#include <nlohmann/json.hpp>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "command_support.hpp"
#include "measuring_command.hpp"
#include "commands.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/backends/library_versions.hpp"
#include "fabricbench/storage/mounts.hpp"
#include "fabricbench/topo/report.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "number_flags.hpp"

namespace fb::cli {
namespace {

using json = nlohmann::ordered_json;

struct TopoFlags {
  std::string out;
  bool overwrite = false;
  std::string sysfs_root;
  bool strict = false;
  bool quiet = false;
  std::string path;       // --path: name the filesystem this folder is on, per node
  std::string mountinfo = "/proc/self/mountinfo";
};

void add_topo_flags(CLI::App& app, TopoFlags& f) {
  app.add_option("--out", f.out, "write the record (header, one inventory line per rank, summary), JSON Lines")
      ->check(output_path_validator());
  app.add_flag("--overwrite", f.overwrite, "replace the --out file when it exists (refused without it)");
  app.add_flag("--strict", f.strict, "exit 1 when GPUs, software or NICs differ between ranks");
  app.add_option("--sysfs-root", f.sysfs_root,
                 "read sysfs under this folder instead of / (a copied or fixture tree; NVML is then not asked)");
  app.add_flag("-q,--quiet", f.quiet, "no report: only errors and the one-line summary");
  app.add_option("--path", f.path, "also name the filesystem this folder is on (nfs4, lustre, fuse.sshfs, ext4 ...) "
                                   "and its mount options, per node");
  app.add_option("--mountinfo", f.mountinfo, "read this mount table instead of /proc/self/mountinfo (a copied file)")
      ->capture_default_str();
}

// This rank's reading of the filesystem under --path: "" when not asked;
// `error` names the path when it cannot be read (exit 2).
[[nodiscard]] std::string path_filesystem(const TopoFlags& f, std::string& error) {
  if (f.path.empty()) return "";
  const auto m = storage::mount_of_path(f.path, error, f.mountinfo);
  if (!m) {
    error = "--path " + error;
    return "";
  }
  return storage::describe(*m);
}

// Each node's filesystem under --path (its first rank's reading, so a node
// that mounts something else there shows), or one line when all agree.
std::string path_report(const Comm& world, const NodeMap& nodes, const std::string& path, const std::string& mine) {
  const auto all = world.allgather_strings(mine);
  if (path.empty() || world.rank() != 0) return "";
  std::vector<std::pair<std::string, std::string>> by_node;  // host, filesystem
  for (int n = 0; n < nodes.nodes; ++n)
    for (int r = 0; r < world.size(); ++r)
      if (nodes.rank_node[static_cast<std::size_t>(r)] == n) {
        by_node.emplace_back(nodes.node_hosts[static_cast<std::size_t>(n)], all[static_cast<std::size_t>(r)]);
        break;
      }
  std::string out = "# filesystem of --path " + path + "\n";
  const bool same =
      std::all_of(by_node.begin(), by_node.end(), [&](const auto& n) { return n.second == by_node[0].second; });
  if (same)
    return out + fmt::format("  {} node{}: {}\n", by_node.size(), by_node.size() == 1 ? "" : "s", by_node[0].second);
  for (const auto& [host, fsys] : by_node) out += fmt::format("  {}: {}\n", host, fsys);
  return out;
}

// Each rank's own --sysfs-root (a copied tree per node) must hold a sys folder.
void check_sysfs_root(const TopoFlags& f) {
  std::error_code ec;
  if (!f.sysfs_root.empty() && !std::filesystem::is_directory(f.sysfs_root + "/sys", ec))
    throw UsageError("--sysfs-root '" + f.sysfs_root + "': no sys folder inside; give the folder that holds sys/");
}

// "" or the first write error (file and errno).
[[nodiscard]] std::string write_record(const std::string& path, bool overwrite, const RunHeader& header,
                                       const std::vector<json>& lines, const Summary& summary) {
  RecordWriter w;
  if (std::string err = w.open(path, overwrite); !err.empty()) return err;
  w.write(header);
  for (const auto& l : lines) w.write(inventory_line(l));
  w.seal(summary);
  return w.error();
}

int report(int argc, char** argv, const Comm& world, const TopoFlags& f, const NodeMap& nodes,
           const std::vector<json>& lines, const std::string& run_id, double seconds) {
  const auto differences = topo::find_differences(lines);
  int exit_code = f.strict && !differences.empty() ? kExitFailed : kExitOk;
  std::size_t flags = 0;
  for (const auto& l : lines) flags += l.value("flags", json::array()).size();
  if (!f.quiet) std::fputs(topo::format_report(lines, differences).c_str(), stdout);
  if (!f.out.empty()) {
    Summary summary;
    summary.topo = TopoTotals{world.size(), nodes.nodes, flags, !differences.empty(), topo::to_json(differences)};
    summary.elapsed_s = seconds;
    summary.exit_code = exit_code;
    exit_code = output_failure(
        "topo", write_record(f.out, f.overwrite, record_header("topo", argc, argv, world, nodes, run_id), lines, summary),
        exit_code);
  }
  user_log().info("fabricbench topo: {} rank{}, {} node{}, {} flag{}, {}{}{}", world.size(),
                  world.size() == 1 ? "" : "s", nodes.nodes, nodes.nodes == 1 ? "" : "s", flags, flags == 1 ? "" : "s",
                  differences.empty() ? "no differences between ranks" : "ranks differ (see heterogeneity)",
                  f.out.empty() ? "" : ", record ", f.out);
  return exit_code;
}

// Collective, once the flags are agreed: every rank's inventory, reported
// and recorded by rank 0. Returns rank 0's exit code on every rank.
int inventory(const Comm& world, int argc, char** argv, const TopoFlags& flags) {
  std::string fs_error;
  const std::string filesystem = path_filesystem(flags, fs_error);
  if (const std::string e = agree_on_error(world, fs_error); !e.empty()) return usage_exit(world, "topo", e);
  const NodeMap nodes = map_nodes(world);
  const std::string fs_report = path_report(world, nodes, flags.path, filesystem);
  const bool tree = !flags.sysfs_root.empty();
  const auto nvml = tree ? topo::absent_nvml("not asked: --sysfs-root reads a tree, NVML would describe this machine")
                         : topo::load_nvml();
  const auto started = std::chrono::steady_clock::now();
  const auto lines = topo::gather_inventory(world, nodes, loaded_library_versions(), topo::Sysfs(tree ? flags.sysfs_root : "/"), *nvml);
  const std::string run_id = shared_run_id(world);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::int64_t exit_code = kExitOk;
  if (world.rank() == 0) {
    try {
      if (!flags.quiet) std::fputs(fs_report.c_str(), stdout);
      exit_code = report(argc, argv, world, flags, nodes, lines, run_id, seconds);
    } catch (const std::exception& e) {
      user_log().error("fabricbench topo: {}", e.what());
      exit_code = kExitRunError;
    }
  }
  // One exit code on every rank, so the launcher reports rank 0's verdict.
  world.bcast_quiet({&exit_code, 1}, 0);
  return static_cast<int>(exit_code);
}

}  // namespace

int topo_main(int argc, char** argv) {
  CLI::App app{
      "Inventory of GPUs, NVLink, PCIe and NICs per rank; the path each scope takes and its spec peak; "
      "what differs between nodes. Alone or under mpirun/srun.",
      "fabricbench topo"};
  TopoFlags flags;
  add_topo_flags(app, flags);
  const CommandEntry entry{"topo",
                           app,
                           [&] { check_sysfs_root(flags); },
                           [&] {
                             return Outputs{{{flags.out, "--out"}}, flags.overwrite};
                           },
                           [&] { return flags.quiet ? Verbosity::quiet : Verbosity::normal; },
                           {"sysfs-root"}};
  return command_main(&argc, &argv, entry, [&](const Comm& world) { return inventory(world, argc, argv, flags); });
}

}  // namespace fb::cli
