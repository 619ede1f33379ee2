// `fabricbench gemm`: cuBLAS matrix products on every rank's GPU, gathered to
// rank 0: a table, the slowest GPU named, and with --out a record of "gemm"
// lines (docs/results-schema.md) for the model and step commands.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/topo/report.hpp"
#include "gemm/gemm_probe.hpp"
#include "gpu_backends.hpp"
#include "record_header.hpp"
#include "run_options.hpp"

namespace fb::cli {
namespace {

using json = nlohmann::ordered_json;

struct GemmFlags {
  int size = 8192;
  std::vector<std::string> dtypes{"bf16", "fp16"};
  int iters = 20;
  int warmup = 5;
  int device = -1;
  std::string out;
  std::string csv;
  bool quiet = false;
};

struct GemmPlan {
  std::vector<Dtype> dtypes;
  GemmSpec base;
};

void add_flags(CLI::App& app, GemmFlags& f) {
  app.add_option("--size", f.size, "m = n = k of each product (8192 fills an H100/H200)")->capture_default_str();
  app.add_option("-d,--dtype", f.dtypes, "datatypes, comma-separated: bf16, fp16, fp32 (fp32 without TF32)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("-n,--iters", f.iters, "timed products per datatype")->capture_default_str();
  app.add_option("-w,--warmup_iters", f.warmup, "untimed products first")->capture_default_str();
  app.add_option("--device", f.device, "CUDA device of every rank (default: the rank's index on its node)");
  app.add_option("--out", f.out, "record, JSON Lines: a run header, one \"gemm\" line per rank and datatype")
      ->check(output_path_validator());
  app.add_option("--csv", f.csv, "also write the per-rank rows as CSV")->check(output_path_validator());
  app.add_flag("-q,--quiet", f.quiet, "no table: errors and the slowest-GPU line only");
}

GemmPlan resolve_gemm(const GemmFlags& f) {
  GemmPlan p;
  if (f.size < 16 || f.size > 65536) throw UsageError(fmt::format("--size {}: 16 to 65536", f.size));
  if (f.iters < 1) throw UsageError(fmt::format("--iters {}: at least 1", f.iters));
  if (f.warmup < 0) throw UsageError(fmt::format("--warmup_iters {}: 0 or more", f.warmup));
  if (f.device < -1) throw UsageError(fmt::format("--device {}: a CUDA device index", f.device));
  for (const auto& name : f.dtypes) {
    const auto d = parse_dtype(name);
    if (!d || !(*d == Dtype::bfloat16 || *d == Dtype::half || *d == Dtype::float32))
      throw UsageError(fmt::format("--dtype '{}': use bf16, fp16 or fp32", name));
    p.dtypes.push_back(*d);
  }
  p.base.m = p.base.n = p.base.k = f.size;
  p.base.iters = f.iters;
  p.base.warmup = f.warmup;
  return p;
}

json result_line(const Comm& world, const GpuPlacement& gpu, const GemmResult& r) {
  return {{"type", "gemm"},
          {"rank", world.rank()},
          {"host", host_name()},
          {"device", gpu.device},
          {"gpu", gpu.name},
          {"pci_bus_id", gpu.pci_bus_id},
          {"dtype", name(r.spec.dtype)},
          {"m", r.spec.m},
          {"n", r.spec.n},
          {"k", r.spec.k},
          {"iterations", r.time.iterations},
          {"time_min_us", r.time.min_us},
          {"time_median_us", r.time.median_us},
          {"time_max_us", r.time.max_us},
          {"tflops", r.tflops}};
}

// Every rank's lines, on rank 0 (empty elsewhere).
std::vector<json> gather(const Comm& world, const std::vector<json>& mine) {
  const auto all = world.allgather_strings(json(mine).dump());
  std::vector<json> lines;
  if (world.rank() != 0) return lines;
  for (const auto& text : all)
    for (auto& line : json::parse(text)) lines.push_back(std::move(line));
  return lines;
}

// "bf16: slowest rank 3 (host n07, GPU 3 0000:1B:00.0, NVIDIA H200) 612.3 TFLOP/s, 21.7% below the fastest (782.5)"
std::vector<json> slowest_per_dtype(const std::vector<json>& lines, const std::vector<Dtype>& dtypes) {
  std::vector<json> out;
  for (Dtype d : dtypes) {
    const json* slow = nullptr;
    double fastest = 0;
    for (const auto& l : lines) {
      if (l["dtype"] != name(d)) continue;
      fastest = std::max(fastest, l["tflops"].get<double>());
      if (!slow || l["tflops"].get<double>() < (*slow)["tflops"].get<double>()) slow = &l;
    }
    if (!slow) continue;
    const double tf = (*slow)["tflops"].get<double>();
    out.push_back({{"dtype", name(d)},
                   {"rank", (*slow)["rank"]},
                   {"host", (*slow)["host"]},
                   {"device", (*slow)["device"]},
                   {"pci_bus_id", (*slow)["pci_bus_id"]},
                   {"tflops", tf},
                   {"fastest_tflops", fastest},
                   {"below_fastest_pct", fastest > 0 ? 100.0 * (1.0 - tf / fastest) : 0.0}});
  }
  return out;
}

void print_table(const std::vector<json>& lines, const GemmPlan& plan) {
  std::printf("# fabricbench gemm  %dx%dx%d  cuBLAS, fp32 accumulation, random inputs\n", plan.base.m, plan.base.n,
              plan.base.k);
  std::printf("# %5s %-20s %6s %-24s %-9s %12s %10s\n", "rank", "host", "device", "gpu", "dtype", "time (us)",
              "TFLOP/s");
  for (const auto& l : lines)
    std::printf("  %5d %-20s %6d %-24s %-9s %12.2f %10.2f\n", l["rank"].get<int>(),
                l["host"].get<std::string>().c_str(), l["device"].get<int>(), l["gpu"].get<std::string>().c_str(),
                l["dtype"].get<std::string>().c_str(), l["time_median_us"].get<double>(), l["tflops"].get<double>());
}

void write_csv(const std::string& path, const std::vector<json>& lines) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw RunError(fmt::format("cannot write CSV file '{}'", path));
  std::fprintf(f, "rank,host,device,gpu,pci_bus_id,dtype,m,n,k,iterations,time_median_us,tflops\n");
  for (const auto& l : lines)
    std::fprintf(f, "%d,%s,%d,%s,%s,%s,%d,%d,%d,%zu,%.3f,%.3f\n", l["rank"].get<int>(),
                 l["host"].get<std::string>().c_str(), l["device"].get<int>(), l["gpu"].get<std::string>().c_str(),
                 l["pci_bus_id"].get<std::string>().c_str(), l["dtype"].get<std::string>().c_str(), l["m"].get<int>(),
                 l["n"].get<int>(), l["k"].get<int>(), l["iterations"].get<std::size_t>(),
                 l["time_median_us"].get<double>(), l["tflops"].get<double>());
  std::fclose(f);
}

struct Gathered {
  std::vector<json> inventory;  // what the GPUs are, from topo (rank 0 only)
  std::vector<json> lines;      // the gemm lines of every rank (rank 0 only)
};

void report(int argc, char** argv, const Comm& world, const NodeMap& nodes, const GemmFlags& flags,
            const GemmPlan& plan, const Gathered& g, double seconds) {
  const auto slowest = slowest_per_dtype(g.lines, plan.dtypes);
  if (!flags.quiet) print_table(g.lines, plan);
  for (const auto& s : slowest)
    std::fprintf(stderr, "fabricbench gemm: %s slowest GPU: rank %d (host %s, GPU %d %s) %.1f TFLOP/s, %.1f%% below "
                 "the fastest (%.1f)\n",
                 s["dtype"].get<std::string>().c_str(), s["rank"].get<int>(), s["host"].get<std::string>().c_str(),
                 s["device"].get<int>(), s["pci_bus_id"].get<std::string>().c_str(), s["tflops"].get<double>(),
                 s["below_fastest_pct"].get<double>(), s["fastest_tflops"].get<double>());
  if (!flags.csv.empty()) write_csv(flags.csv, g.lines);
  if (flags.out.empty()) return;
  RecordWriter record;
  if (const auto error = record.open(flags.out); !error.empty()) throw RunError(error);
  json header = record_header("gemm", argc, argv, world, nodes);
  header["options"] = {{"size", plan.base.m}, {"dtypes", flags.dtypes}, {"iters", plan.base.iters},
                       {"warmup_iters", plan.base.warmup}};
  record.write(header);
  for (const auto& l : g.inventory) record.write(l);
  for (const auto& l : g.lines) record.write(l);
  record.write({{"type", "summary"},
                {"status", "complete"},
                {"rows", g.lines.size()},
                {"slowest", slowest},
                {"elapsed_s", seconds},
                {"exit_code", kExitOk}});
}

int execute(int argc, char** argv, const Comm& world, const GemmFlags& flags, const GemmPlan& plan) {
  GpuPlacement gpu;
  const Support placed = place_on_gpu(world, flags.device, gpu);
  if (const auto error = agree_on_error(world, placed.ok ? "" : placed.why); !error.empty())
    return usage_exit(world, "gemm", error);
  const auto started = std::chrono::steady_clock::now();
  std::vector<json> mine;
  std::string error;
  for (Dtype d : plan.dtypes) {
    GemmSpec spec = plan.base;
    spec.dtype = d;
    try {
      mine.push_back(result_line(world, gpu, run_gemm(spec, gpu.device)));
    } catch (const UsageError& e) {
      error = fmt::format("--size {}: {}", flags.size, e.what());
      break;
    }
  }
  if (error = agree_on_error(world, error); !error.empty()) return usage_exit(world, "gemm", error);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const NodeMap nodes = map_nodes(world);
  const Gathered g{topo::gather_inventory(world, nodes), gather(world, mine)};
  if (world.rank() == 0) report(argc, argv, world, nodes, flags, plan, g, seconds);
  return kExitOk;
}

}  // namespace

int gemm_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, "gemm"); stop >= 0) return stop;
  CLI::App app{"cuBLAS matrix products on every rank's GPU: achieved TFLOP/s, the slowest GPU named.",
               "fabricbench gemm"};
  GemmFlags flags;
  add_flags(app, flags);
  GemmPlan plan;
  const int stop = parse_on_every_rank(
      world, app, argc, argv, "gemm",
      [&] { plan = resolve_gemm(flags); },
      [&] { return std::vector<OutputFile>{{flags.out, "--out"}, {flags.csv, "--csv"}}; });
  if (stop >= 0) return stop;
  setup_logging(world.rank(), flags.quiet ? Verbosity::quiet : Verbosity::normal);
  return run_or_abort([&] { return execute(argc, argv, world, flags, plan); });
}

}  // namespace fb::cli
