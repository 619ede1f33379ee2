// The collective parts of `fabricbench storage`: folders, space, and the
// phases in which a subset of nodes does I/O while the others wait.
#include "fabricbench/storage/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/storage/line.hpp"

namespace fb::storage {
namespace {

using json = nlohmann::ordered_json;

// Steps of the progress board per phase: every rank starts each phase at the
// same step number whether it does I/O or waits (progress.hpp, enter_at).
constexpr std::int64_t kStepsPerPhase = 16;

// A rank's figures on the wire: the scalars as JSON, the per-call times as
// raw doubles after a newline (there may be hundreds of thousands).
std::string encode(const RankFigures& f) {
  json j = {{"bytes", f.bytes},          {"ops", f.ops},     {"elapsed_us", f.elapsed_us}, {"o_direct", f.o_direct},
            {"cache", static_cast<int>(f.cache)}, {"note", f.note}};
  std::string out = j.dump() + "\n";
  out.append(reinterpret_cast<const char*>(f.op_us.data()), f.op_us.size() * sizeof(double));
  return out;
}

RankFigures decode(const std::string& blob) {
  const auto nl = blob.find('\n');
  const json j = json::parse(blob.substr(0, nl));
  RankFigures f;
  f.bytes = j.at("bytes").get<std::uint64_t>();
  f.ops = j.at("ops").get<std::uint64_t>();
  f.elapsed_us = j.at("elapsed_us").get<double>();
  f.o_direct = j.at("o_direct").get<bool>();
  const int cache = j.at("cache").get<int>();
  f.cache = cache >= 0 && cache < kCacheCount ? static_cast<Cache>(cache) : Cache::cached;
  f.note = j.at("note").get<std::string>();
  const std::size_t n = (blob.size() - nl - 1) / sizeof(double);
  f.op_us.resize(n);
  if (n) std::memcpy(f.op_us.data(), blob.data() + nl + 1, n * sizeof(double));
  return f;
}

std::string join_options(const MountEntry& m) {
  return m.super_options.empty() ? m.mount_options : m.mount_options + "," + m.super_options;
}

}  // namespace

struct StorageRunner::Site {
  Workspace ws;
  bool io = false;
  bool sees_rank0 = false;  // uses rank 0's run folder
};

StorageRunner::StorageRunner(const Comm& world, const NodeMap& nodes, StorageOptions options, std::string run_id)
    : world_(world), nodes_(nodes), options_(std::move(options)), run_id_(std::move(run_id)) {
  targets_.push_back({"path", options_.path, "--path", std::nullopt, false, {}});
  if (!options_.local.empty()) targets_.push_back({"local", options_.local, "--local", std::nullopt, false, {}});
}

StorageRunner::~StorageRunner() { clean(); }

bool StorageRunner::io_rank() const { return !options_.one_per_node || nodes_.local_rank == 0; }

void StorageRunner::prepare() {
  validate(options_);
  for (auto& t : targets_) {
    // --local is each node's own disk: measured with every node at once.
    t.node_counts = t.name == "local" ? std::vector<int>{nodes_.nodes} : node_counts(options_, nodes_.nodes);
    sites_.push_back(std::make_unique<Site>());
    prepare_target(t, *sites_.back());
    check_space(t, *sites_.back());
  }
}

void StorageRunner::prepare_target(Target& t, Site& site) {
  site.io = io_rank();
  Workspace& ws = site.ws;
  const std::string name = run_folder_name(run_id_);
  std::string error = site.io ? check_folder(t.folder, t.flag) : "";
  if (error.empty() && site.io) error = ws.open_base(t.folder, t.flag);
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(error);
  // Rank 0 makes the run's folder; every rank that sees it shares rank 0's
  // filesystem. (agree_on_error orders the steps: nobody looks before it is made.)
  if (world_.rank() == 0) error = ws.make_run_folder(name);
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(fmt::format("{} {}", t.flag, error));
  if (site.io && world_.rank() != 0) site.sees_rank0 = ws.find_run_folder(name, error);
  if (world_.rank() == 0) site.sees_rank0 = true;
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(error);
  // A node that does not see it has a filesystem of its own there: its first
  // rank makes the folder (another node on that filesystem may have already).
  const bool lead = site.io && !site.sees_rank0 && nodes_.local_rank == 0;
  if (lead && !ws.find_run_folder(name, error) && error.empty()) error = ws.make_run_folder(name);
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(error);
  if (site.io && !site.sees_rank0 && nodes_.local_rank != 0 && !ws.find_run_folder(name, error) && error.empty())
    error = fmt::format("{} '{}': this rank does not see the folder its node's first rank made there ({}): the "
                        "ranks of one node must see the same filesystem",
                        t.flag, t.folder, name);
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(error);
  if (site.io) error = ws.make_rank_folder(world_.rank());
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(error);
  std::int64_t apart = site.io && !site.sees_rank0 ? 1 : 0;
  world_.allreduce_max_quiet({&apart, 1});
  t.shared = apart == 0;
  if (world_.rank() == 0) {
    std::string mount_error;
    t.mount = mount_of_path(t.folder, mount_error);
  }
}

void StorageRunner::check_space(const Target& t, const Site& site) const {
  std::uint64_t free = 0;
  std::string error;
  if (site.io && !site.ws.free_bytes(free, error)) error = fmt::format("{} {}", t.flag, error);
  if (!(error = agree_on_error(world_, error)).empty()) throw UsageError(error);
  // Every rank's view, so every rank reaches the same verdict.
  const auto all = world_.allgather_strings(fmt::format("{} {} {}", site.io ? 1 : 0, site.sees_rank0 ? 1 : 0, free));
  const std::uint64_t per_rank = peak_bytes_per_rank(options_);
  // Groups of ranks writing to one filesystem: rank 0's, and each node of its own.
  std::vector<std::uint64_t> writers(static_cast<std::size_t>(nodes_.nodes) + 1, 0);
  std::vector<std::uint64_t> free_of(writers.size(), 0);
  std::vector<bool> have(writers.size(), false);
  for (std::size_t r = 0; r < all.size(); ++r) {
    int io = 0, sees = 0;
    unsigned long long f = 0;
    if (std::sscanf(all[r].c_str(), "%d %d %llu", &io, &sees, &f) != 3 || !io) continue;
    const std::size_t g = sees ? 0 : static_cast<std::size_t>(nodes_.rank_node[r]) + 1;
    ++writers[g];
    if (!have[g]) free_of[g] = f, have[g] = true;
  }
  for (std::size_t g = 0; g < writers.size(); ++g) {
    if (writers[g] == 0) continue;
    std::uint64_t need = 0;
    const bool overflow = __builtin_mul_overflow(writers[g], per_rank, &need);
    if (!overflow && need <= free_of[g]) continue;
    const std::string where = g == 0 ? "" : fmt::format(" on node {}", nodes_.node_hosts[g - 1]);
    throw UsageError(fmt::format(
        "{} '{}'{} has {} free but the run holds {} there at once ({} rank{} x {}: the larger of --bytes and --files x "
        "--file-bytes): give smaller sizes or free space",
        t.flag, t.folder, where, format_bytes(free_of[g]), overflow ? "more than 16 EiB" : format_bytes(need),
        writers[g], writers[g] == 1 ? "" : "s", format_bytes(per_rank)));
  }
}

std::size_t StorageRunner::planned_rows() const {
  std::size_t per_count = 0;
  if (options_.sequential) per_count += 2 * options_.block_sizes.size();
  if (options_.small_files) per_count += 2;
  per_count *= options_.modes.size();
  std::size_t rows = 0;
  for (const auto& t : targets_) rows += per_count * t.node_counts.size();
  return rows;
}

void StorageRunner::run(const Row& row) {
  try {
    for (std::size_t i = 0; i < targets_.size(); ++i) run_target(i, row);
  } catch (...) {
    clean();
    throw;
  }
}

void StorageRunner::run_target(std::size_t index, const Row& row) {
  const Target& t = targets_[index];
  Site& site = *sites_[index];
  LineContext context;
  context.run_id = run_id_;
  context.target = t.name;
  context.path = t.folder;
  context.shared = t.shared;
  if (t.mount) {
    context.fs_type = t.mount->fs_type;
    context.fs_kind = std::string(name(fs_kind(t.mount->fs_type)));
    context.mount_source = t.mount->source;
    context.mount_options = join_options(*t.mount);
  }
  // One pattern's write then read, with `count` nodes doing I/O.
  const auto measure = [&](int count, const LineContext& c, Pattern write, Pattern read, const auto& make) {
    const bool active = site.io && nodes_.node < count;
    step_ += kStepsPerPhase;
    if (board_) board_->enter_at(Phase::sync, step_);
    std::unique_ptr<PatternFiles> files;
    if (active) files = make();
    for (const Pattern p : {write, read}) {
      if (board_) board_->enter_at(Phase::sync, step_ + (is_read(p) ? kStepsPerPhase / 2 : 1));
      world_.barrier_quiet();
      RankFigures f;
      if (active) f = is_read(p) ? files->read() : files->write();
      if (board_) board_->enter(Phase::sync);
      const auto blobs = world_.gather_strings_quiet(active ? encode(f) : std::string(), 0);
      if (world_.rank() != 0) continue;
      std::vector<RankResult> results;
      for (std::size_t r = 0; r < blobs.size(); ++r)
        if (!blobs[r].empty()) results.push_back({static_cast<int>(r), nodes_.rank_node[r], decode(blobs[r])});
      row(make_line(c, p, results, nodes_.node_hosts));
    }
  };
  for (const int count : t.node_counts) {
    for (const Mode mode : options_.modes) {
      context.mode = mode;
      if (options_.sequential) {
        for (const auto block : options_.block_sizes) {
          LineContext c = context;
          c.block_bytes = block;
          c.file_bytes = sequential_bytes(options_, block);
          c.files = 1;
          measure(count, c, Pattern::seq_write, Pattern::seq_read, [&] {
            return std::make_unique<SequentialFile>(site.ws, c.file_bytes, block, mode, board_);
          });
        }
      }
      if (options_.small_files) {
        LineContext c = context;
        c.block_bytes = small_block_bytes(options_);
        c.file_bytes = options_.file_bytes;
        c.files = options_.files;
        measure(count, c, Pattern::small_write, Pattern::small_read, [&] {
          return std::make_unique<SmallFiles>(site.ws, options_.files, options_.file_bytes, c.block_bytes, mode,
                                              board_);
        });
      }
    }
  }
}

void StorageRunner::clean() {
  for (auto& s : sites_) s->ws.clean();
}

}  // namespace fb::storage
