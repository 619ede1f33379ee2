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
#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/csv.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/gemm_slowest.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/text_table.hpp"
#include "fabricbench/model/gemm_shapes.hpp"
#include "fabricbench/model/workload.hpp"
#include "fabricbench/topo/report.hpp"
#include "record_header.hpp"
#include "measuring_command.hpp"
#include "run_options.hpp"

namespace fb::cli {
namespace {

using json = nlohmann::ordered_json;

struct GemmFlags {
  int size = 8192;
  std::vector<std::string> shapes;  // "MxNxK"
  std::string shapes_of;            // a workload file
  std::vector<std::string> dtypes{"bf16", "fp16"};
  int iters = 20;
  int warmup = 5;
  int device = -1;
  std::string out;
  std::string csv;
  bool overwrite = false;
  bool quiet = false;
  std::string timeout = "auto";
};

// The products to time, in order: every shape in every dtype.
struct GemmPlan {
  std::vector<Dtype> dtypes;
  GemmSpec base;
  std::vector<model::GemmShape> shapes;  // one square --size product unless --shape or --shapes-of
  std::string title;                     // what the shapes are, for the table's head
};

void add_flags(CLI::App& app, GemmFlags& f) {
  auto* size = app.add_option("--size", f.size, "m = n = k of one square product (8192 fills an H100/H200)")
                   ->capture_default_str();
  app.add_option("--shape", f.shapes, "products of these shapes instead, MxNxK, comma-separated (C is m x n)")
      ->delimiter(',')
      ->excludes(size);
  app.add_option("--shapes-of", f.shapes_of,
                 "the products one layer of this workload runs on one GPU, forward and backward (its micro-batch, "
                 "sequence, hidden size and tp): what `model` prices shape by shape")
      ->excludes(size);
  app.add_option(
         "-d,--dtype", f.dtypes,
         "datatypes, comma-separated: bf16, fp16, fp32 (fp32 without TF32), fp8_e4m3 (through cuBLASLt, C in bf16; "
         "compute capability 8.9 or newer)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("-n,--iters", f.iters, "timed products per datatype and shape")->capture_default_str();
  app.add_option("-w,--warmup_iters", f.warmup, "untimed products first")->capture_default_str();
  app.add_option("--device", f.device, "CUDA device of every rank (default: the rank's index on its node)");
  app.add_option("--out", f.out, "record, JSON Lines: a run header, one \"gemm\" line per rank, datatype and shape")
      ->check(output_path_validator());
  app.add_option("--csv", f.csv, "also write the per-rank rows as CSV")->check(output_path_validator());
  app.add_flag("--overwrite", f.overwrite, "replace --out and --csv files that exist (refused without it)");
  app.add_flag("-q,--quiet", f.quiet, "no table: errors and the slowest-GPU line only");
  add_timeout_option(app, f.timeout);
}

// "4096x12288x4096" -> m, n, k (each 1 to 65536).
model::GemmShape parse_shape(const std::string& text) {
  model::GemmShape s{text};
  long long* sides[] = {&s.m, &s.n, &s.k};
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find('x', at) : text.size();
    const std::string side = end == std::string::npos ? "" : text.substr(at, end - at);
    const bool digits = !side.empty() && side.size() <= 5 && side.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(side) < 1 || std::stoll(side) > 65536)
      throw UsageError(fmt::format("--shape '{}': MxNxK, each side 1 to 65536 (e.g. 8192x24576x8192)", text));
    *sides[i] = std::stoll(side);
    at = end + 1;
  }
  return s;
}

GemmPlan resolve_gemm(const GemmFlags& f) {
  GemmPlan p;
  if (f.size < 16 || f.size > 65536) throw UsageError(fmt::format("--size {}: 16 to 65536", f.size));
  if (f.iters < 1) throw UsageError(fmt::format("--iters {}: at least 1", f.iters));
  if (f.warmup < 0) throw UsageError(fmt::format("--warmup_iters {}: 0 or more", f.warmup));
  if (f.device < -1) throw UsageError(fmt::format("--device {}: a CUDA device index", f.device));
  for (const auto& name : f.dtypes) {
    const auto d = parse_dtype(name);
    if (!d || !gemm_offers(*d)) throw UsageError(fmt::format("--dtype '{}': use {}", name, kGemmDtypes));
    p.dtypes.push_back(*d);
  }
  p.base.m = p.base.n = p.base.k = f.size;
  p.shapes = {{"square", f.size, f.size, f.size}};
  p.title = fmt::format("{}x{}x{}", f.size, f.size, f.size);
  if (!f.shapes.empty() && !f.shapes_of.empty()) throw UsageError("--shape and --shapes-of: give one of them");
  if (!f.shapes.empty()) {
    p.shapes.clear();
    for (const auto& text : f.shapes) p.shapes.push_back(parse_shape(text));
    p.title = fmt::format("{} shapes", p.shapes.size());
  }
  if (!f.shapes_of.empty()) {
    const model::Workload w = [&] {
      try {
        return model::load_workload(f.shapes_of);
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("--shapes-of: {}", e.what()));
      }
    }();
    // Products of one shape are timed once (attention out's forward and data
    // gradient, say); the model prices each product from that line.
    p.shapes.clear();
    for (auto& s : model::layer_gemm_shapes(w)) {
      const bool seen = std::any_of(p.shapes.begin(), p.shapes.end(),
                                    [&](const model::GemmShape& o) { return o.m == s.m && o.n == s.n && o.k == s.k; });
      if (!seen) p.shapes.push_back(std::move(s));
    }
    for (const auto& s : p.shapes)
      if (const std::string why = model::oversized_gemm(s); !why.empty())
        throw UsageError(fmt::format("--shapes-of {}: {}", f.shapes_of, why));
    p.title = fmt::format("the {} shapes of one layer of {} (micro_batch {}, seq_len {}, hidden {}, tp {})",
                          p.shapes.size(), w.name, w.micro_batch, w.seq_len, w.hidden, w.tp);
  }
  p.base.iters = f.iters;
  p.base.warmup = f.warmup;
  return p;
}

GemmLine result_line(const Comm& world, const GpuPlacement& gpu, const GemmResult& r) {
  GemmLine g;
  g.rank = world.rank();
  g.host = host_name();
  g.device = gpu.device;
  g.gpu = gpu.name;
  g.pci_bus_id = gpu.pci_bus_id;
  g.dtype = std::string(name(r.spec.dtype));
  g.m = r.spec.m;
  g.n = r.spec.n;
  g.k = r.spec.k;
  g.iterations = r.time.iterations;
  g.time_min_us = r.time.min_us;
  g.time_median_us = r.time.median_us;
  g.time_max_us = r.time.max_us;
  g.tflops = r.tflops;
  return g;
}

// Every rank's lines, on rank 0 (empty elsewhere).
std::vector<GemmLine> gather(const Comm& world, const std::vector<GemmLine>& mine) {
  json text = json::array();
  for (const auto& l : mine) text.push_back(to_json(l));
  const auto all = world.allgather_strings(text.dump());
  std::vector<GemmLine> lines;
  if (world.rank() != 0) return lines;
  for (const auto& t : all)
    for (const auto& line : json::parse(t)) lines.push_back(gemm_from_json(line));
  return lines;
}

// One row per GPU under a "# " head, widths that grow with a long host or GPU name.
void print_table(const std::vector<GemmLine>& lines, const GemmPlan& plan) {
  std::printf("# fabricbench gemm  %s  cuBLAS, fp32 accumulation, random inputs\n", plan.title.c_str());
  const auto column = [](const char* head, Align align, std::size_t width) {
    return TextColumn{.head = head, .align = align, .min_width = width, .gap = " "};
  };
  TextTable t;
  t.head_prefix = "# ";
  t.row_prefix = "  ";
  t.columns = {column("rank", Align::right, 5),       column("host", Align::left, 20),
               column("device", Align::right, 6),     column("gpu", Align::left, 24),
               column("dtype", Align::left, 9),       column("m x n x k", Align::right, 18),
               column("time (us)", Align::right, 12), column("TFLOP/s", Align::right, 10)};
  for (const auto& l : lines)
    t.add_row({std::to_string(l.rank), l.host, std::to_string(l.device), l.gpu, l.dtype,
               fmt::format("{}x{}x{}", l.m, l.n, l.k), fmt::format("{:.2f}", l.time_median_us),
               fmt::format("{:.2f}", l.tflops)});
  std::fputs(render(t).c_str(), stdout);
}

// "" or the first write error.
[[nodiscard]] std::string write_csv(const std::string& path, bool overwrite, const std::vector<GemmLine>& lines,
                                    const std::string& run_id) {
  CsvWriter csv;
  if (auto err = csv.open(path, overwrite,
                          {"rank", "host", "device", "gpu", "pci_bus_id", "dtype", "m", "n", "k", "iterations",
                           "time_median_us", "tflops", "run_id"});
      !err.empty())
    return err;
  for (const auto& l : lines)
    csv.write_row({std::to_string(l.rank), l.host, std::to_string(l.device), l.gpu, l.pci_bus_id, l.dtype,
                   std::to_string(l.m), std::to_string(l.n), std::to_string(l.k), std::to_string(l.iterations),
                   fmt::format("{:.3f}", l.time_median_us), fmt::format("{:.3f}", l.tflops), run_id});
  csv.sync();
  return csv.error();
}

// The record header's options: what was asked.
json header_options(const GemmFlags& flags, const GemmPlan& plan) {
  json options{
      {"size", plan.base.m}, {"dtypes", flags.dtypes}, {"iters", plan.base.iters}, {"warmup_iters", plan.base.warmup}};
  if (!flags.shapes.empty()) options["shapes"] = flags.shapes;
  if (!flags.shapes_of.empty()) options["shapes_of"] = flags.shapes_of;
  return options;
}

// gemm's own part of the measuring sequence (measuring_command.hpp): each
// rank's GPU, its products timed, every rank's lines gathered to rank 0, the
// slowest GPU named.
class GemmCommand final : public Measuring {
 public:
  GemmCommand(const GemmFlags& flags, const GemmPlan& plan) : flags_(flags), plan_(plan) {}
  void prepare() override {
    // The GPU tools are the gemm plugin's: absent, it says why, like a missing GPU.
    std::string absent;
    tools_ = gpu_tools(&absent);
    const Support placed = tools_ ? tools_->place(job().world, flags_.device, gpu_) : Support::no(absent);
    if (!placed.ok) throw UsageError(placed.why);
  }
  // The products are this rank's own, with no peer to wait for; the
  // watchdog still catches a rank lost or killed, and the gather.
  void watch(ProgressBoard&) override {}
  void open(RunHeader& header) override {
    header.options = header_options(flags_, plan_);
    // Products on the test doubles: check and model refuse the figures as a measurement.
    header.simulated = tools_->simulated();
  }
  void measure() override {
    const auto started = std::chrono::steady_clock::now();
    std::vector<GemmLine> mine;
    for (Dtype d : plan_.dtypes) {
      for (const auto& shape : plan_.shapes) {
        GemmSpec spec = plan_.base;
        spec.dtype = d;
        spec.m = static_cast<int>(shape.m);
        spec.n = static_cast<int>(shape.n);
        spec.k = static_cast<int>(shape.k);
        try {
          mine.push_back(result_line(job().world, gpu_, tools_->run_gemm(spec, gpu_.device)));
        } catch (const UsageError& e) {
          error_ = fmt::format("{} {}x{}x{}: {}", shape.name, shape.m, shape.n, shape.k, e.what());
          break;
        }
      }
      if (!error_.empty()) break;
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (error_ = agree_on_error(job().world, error_); error_.empty()) lines_ = gather(job().world, mine);
  }
  Summary close(double) override {
    Summary summary;
    summary.elapsed_s = seconds_;
    if (!error_.empty()) {
      user_log().error("fabricbench gemm: {}", error_);
      summary.status = "error";
      summary.reason = error_;
      summary.exit_code = kExitUsage;
      return summary;
    }
    slowest_ = slowest_per_dtype(lines_, plan_.dtypes);
    for (const auto& l : lines_) job().sinks.record_line(l);
    summary.gemm = GemmTotals{lines_.size(), slowest_};
    summary.exit_code =
        flags_.csv.empty()
            ? kExitOk
            : output_failure("gemm", write_csv(flags_.csv, flags_.overwrite, lines_, job().run_id), kExitOk);
    return summary;
  }
  int report(int code) override {
    if (!error_.empty()) return code;
    if (!flags_.quiet) print_table(lines_, plan_);
    // "bf16 slowest GPU: rank 3 (host n07, GPU 3 0000:1B:00.0) 612.3 TFLOP/s, 21.7% below the fastest (782.5)"
    for (const auto& s : slowest_)
      user_log().warn(
          "fabricbench gemm: {} slowest GPU: rank {} (host {}, GPU {} {}) {:.1f} TFLOP/s, {:.1f}% below "
          "the fastest ({:.1f})",
          s.dtype, s.rank, s.host, s.device, s.pci_bus_id, s.tflops, s.below_fastest_pct, s.fastest_tflops);
    return code;
  }

 private:
  const GemmFlags& flags_;
  const GemmPlan& plan_;
  const GpuTools* tools_ = nullptr;
  GpuPlacement gpu_;
  std::string error_;  // the first product that failed, agreed on every rank
  std::vector<GemmLine> lines_;
  std::vector<GemmSlowest> slowest_;
  double seconds_ = 0;
};

}  // namespace

int gemm_main(int argc, char** argv) {
  CLI::App app{"cuBLAS matrix products on every rank's GPU: achieved TFLOP/s, the slowest GPU named.",
               "fabricbench gemm"};
  GemmFlags flags;
  add_flags(app, flags);
  GemmPlan plan;
  const auto validate = [&] {
    plan = resolve_gemm(flags);
    (void)timeout_seconds(flags.timeout);
  };
  const auto outputs = [&] { return Outputs{{{flags.out, "--out"}, {flags.csv, "--csv"}}, flags.overwrite}; };
  const auto verbosity = [&] { return flags.quiet ? Verbosity::quiet : Verbosity::normal; };
  const CommandEntry entry{"gemm", app, validate, outputs, verbosity, {}, watchdog_runs(flags.timeout)};
  return command_main(&argc, &argv, entry, [&](const Comm& world) {
    GemmCommand command(flags, plan);
    return measure(world, argc, argv,
                   {.command = "gemm",
                    .timeout = watch::TimeoutPolicy{timeout_seconds(flags.timeout)},
                    .device = flags.device,
                    .record = flags.out,
                    .overwrite = flags.overwrite},
                   command);
  });
}

}  // namespace fb::cli
