// `fabricbench step`: run the training step a workload describes on the ranks
// of this job, measure its communication share, and (--compare-model) set
// the model's prediction for the same step beside the measurement.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/output_file.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/watch_report.hpp"
#include "fabricbench/model/calibrate.hpp"
#include "fabricbench/model/gemm_shapes.hpp"
#include "fabricbench/model/presets.hpp"
#include "preset_flags.hpp"
#include "fabricbench/model/step.hpp"
#include "fabricbench/step/executor.hpp"
#include "fabricbench/step/from_model.hpp"
#include "fabricbench/step/prediction.hpp"
#include "command_support.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "step_report.hpp"
#include "measuring_command.hpp"

namespace fb::cli {
namespace {

struct StepFlags {
  std::string workload;
  std::string backend = "mpi";
  int steps = 10;
  int warmup = 2;
  bool compare_model = false;
  std::string network;
  std::string node;
  PresetFlags presets;
  std::string out;
  std::string calibrated;
  bool overwrite = false;
  int device = -1;
  int gemm_size = 4096;
  std::string gemm_dtype = "bf16";
  std::string timeout = "auto";
  std::vector<std::string> inject;
};

void add_step_flags(CLI::App& app, StepFlags& f) {
  app.add_option("-w,--workload", f.workload, "workload YAML (profiles/workloads/); its cluster is this job's ranks")
      ->required();
  app.add_option("--backend", f.backend, "data plane: " + backend_names())->capture_default_str();
  app.add_option("--steps", f.steps, "measured steps per mode")->capture_default_str();
  app.add_option("--warmup", f.warmup, "warm-up steps per mode")->capture_default_str();
  app.add_flag("--compare-model", f.compare_model, "print the model's prediction for the same step beside it");
  app.add_option("--network", f.network,
                 "for --compare-model: the network between nodes (preset, results file, FILE@SCOPE)");
  app.add_option("--node", f.node, "for --compare-model: the fabric inside a node (preset, results file, FILE@SCOPE)");
  add_preset_flags(&app, f.presets);
  app.add_option("--out", f.out, "results record, JSON Lines (docs/results-schema.md, 'step')")
      ->check(output_path_validator());
  app.add_flag("--overwrite", f.overwrite, "replace --out and --calibrated-workload files that exist (refused without it)");
  app.add_option("--device", f.device, "nccl: CUDA device of every rank (default: the rank's index on its node)");
  app.add_option("--gemm-size", f.gemm_size, "nccl: m = n = k of the cuBLAS products the compute is made of")
      ->capture_default_str();
  app.add_option("--gemm-dtype", f.gemm_dtype,
                 "nccl: datatype of the products and of the step's collectives: bf16 or fp16")
      ->capture_default_str();
  add_timeout_option(app, f.timeout);
  add_inject_option(app, f.inject);
  app.add_option("--calibrated-workload", f.calibrated,
                 "write the workload with its compute rate replaced by the measured one (for `fabricbench model`)");
}

// Which compute goes with which data plane, and the GEMM flags only where
// they apply. Only mpi and nccl carry a step: cuda times copies, not
// collectives, and mpi-cuda has no compute kernel of its own yet.
void check_step_backend(const CLI::App& app, const StepFlags& f) {
  if (f.backend != "mpi" && f.backend != "nccl")
    throw UsageError(fmt::format("--backend {}: a step runs on mpi (host compute kernel) or nccl (cuBLAS products on "
                                 "each rank's GPU)",
                                 f.backend));
  if (f.backend == "mpi") {
    for (const char* flag : {"--gemm-size", "--gemm-dtype", "--device"})
      if (app.count(flag) > 0)
        throw UsageError(fmt::format("{} shapes the GPU compute of --backend nccl; the mpi backend computes on the host",
                                     flag));
    return;
  }
  // Up to 2^18: three such bf16 matrices (384 GiB) fit no GPU yet, and the
  // allocation then says so; the cap only keeps m n k inside cuBLAS's int.
  if (f.gemm_size < 16 || f.gemm_size > (1 << 18))
    throw UsageError(fmt::format("--gemm-size {}: 16 to 262144", f.gemm_size));
  const auto d = parse_dtype(f.gemm_dtype);
  if (!d || !(*d == Dtype::bfloat16 || *d == Dtype::half))
    throw UsageError(fmt::format("--gemm-dtype '{}': use bf16 or fp16", f.gemm_dtype));
}

// The workload as this job runs it: its cluster is the job's layout.
model::Workload job_workload(const std::string& yaml, const std::string& path, const NodeMap& nodes) {
  // A GEMM curve file in the workload is named relative to the workload's folder.
  model::Workload w = model::parse_workload(yaml, std::filesystem::path(path).parent_path().string());
  if (!nodes.uniform)
    throw UsageError("the nodes of this job have different rank counts; a step needs the same ranks on every node");
  w.cluster.nodes = nodes.nodes;
  w.cluster.gpus_per_node = nodes.local_size;
  w.dp = 0;  // the ranks left over by tp x pp
  return w;
}

// The step's structure (sizes, calls, windows) does not depend on the
// network's speed: any fabric prices it; a preset keeps it off the files.
model::StepCost structure_of(const model::Workload& w, const model::Presets& presets) {
  return model::predict_step(w, model::fabric_for(w, w.cluster.nodes > 1 ? "1x10gbe" : "", presets), presets);
}

std::string read_text(const std::string& path) {
  return read_input_file("--workload", path, {.max_bytes = kMaxConfigBytes});
}

// Rank 0 reads the workload and everyone gets the same text: the file need
// not exist on every node.
std::string shared_workload_text(const Comm& world, const std::string& path, std::string& error) {
  std::string text;
  if (world.rank() == 0) {
    try {
      text = read_text(path);
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  return world.bcast_string_quiet(text, 0);
}

struct StepCompute {
  std::unique_ptr<step::ComputeKernel> kernel;
  Dtype dtype = Dtype::float32;  // of the step's collectives
};

// Each rank's compute beside the backend's data plane: the host kernel with
// host MPI; with NCCL, cuBLAS products on the rank's GPU (a host kernel beside
// GPU communication would not compete with it the way GPU kernels do).
// Collective; a UsageError, the same on every rank, when it cannot be made.
StepCompute make_compute(const Comm& world, Backend& backend, const StepFlags& f) {
  RunOptions options;
  options.device = f.device;
  set_up_backend(world, backend, options);
  StepCompute out;
  if (f.backend == "mpi") {
    out.kernel = step::make_host_kernel();
    return out;
  }
  std::string error;
  StepComputeSpec spec;
  spec.gemm.dtype = *parse_dtype(f.gemm_dtype);
  spec.gemm.m = spec.gemm.n = spec.gemm.k = f.gemm_size;
  try {
    // The gemm plugin's products, on the device the backend's setup placed this rank on.
    const GpuTools* tools = gpu_tools(&error);
    if (tools) out.kernel = tools->make_gemm_compute(spec, tools->current_device());
  } catch (const UsageError& e) {
    error = fmt::format("--gemm-size {}: {}", f.gemm_size, e.what());
  }
  if (error = agree_on_error(world, error); !error.empty()) throw UsageError(error);
  out.dtype = spec.gemm.dtype;
  return out;
}

// The GPU step's products of one layer, shape by shape, on the device the
// backend's setup placed this rank on (issue 38): what the layer's own shapes
// take on these GPUs, in the workload's datatype, beside the rate the model
// prices them at. None where the workload has no shapes (given by its FLOPs)
// or a datatype with no product here, and rank 0 says why.
std::optional<LayerProducts> layer_products(const Comm& world, const model::Workload& w,
                                            const model::Presets& presets) {
  std::vector<model::GemmShape> shapes;
  std::string why;
  const std::optional<Dtype> dtype = product_dtype(w, why);
  try {
    if (dtype) shapes = model::layer_gemm_shapes(w);  // the same answer on every rank: the same workload
  } catch (const UsageError& e) {
    why = e.what();
  }
  if (!why.empty()) {
    if (world.rank() == 0) user_log().info("fabricbench step: the layer's products are not timed by shape: {}", why);
    return std::nullopt;
  }
  std::string error;
  const GpuTools* tools = gpu_tools(&error);
  if (error = agree_on_error(world, error); !error.empty()) throw UsageError(error);
  return measure_layer_products(world, *tools, tools->current_device(), shapes, w, presets, *dtype);
}

// --compare-model on one node: every collective of the step stays inside the
// node, so the model prices it on the fabric inside the node. Left to the
// workload's node preset (NVLink) that prices host ranks or an unmeasured
// fabric, and a step within a few percent hid communication off by 50x
// (issue 39). So on one node the comparison takes the node's fabric from
// --node, a record measured on these ranks, or is refused before measuring.
void refuse_unlike_comparison(const StepFlags& f, const NodeMap& nodes) {
  if (nodes.nodes > 1 || !f.node.empty()) return;
  if (!f.network.empty())
    throw UsageError(fmt::format(
        "--network {}: this job runs on one node, so the step's collectives cross no network and the model would "
        "price them on the workload's node preset instead; give --node FILE@global, the fabric inside the node "
        "(--node {})",
        f.network, f.network));
  if (f.backend == "mpi")
    throw UsageError("--compare-model on one node with --backend mpi: the model would price the step's collectives "
                     "on the workload's node preset (GPUs over NVLink) while these ranks are host processes; give "
                     "--node FILE@global, a `fabricbench run` record of these ranks");
}

// step's own part of the measuring sequence (measuring_command.hpp): the
// workload's schedule, the compute beside the data plane, the measured step,
// and the model's prediction beside it.
class StepCommand final : public Measuring {
 public:
  StepCommand(const StepFlags& flags, const std::string& yaml) : f_(flags), yaml_(yaml) {}
  void prepare() override {
    const Comm& world = job().world;
    presets_ = presets_of(f_.presets);
    if (world.rank() == 0) say_preset_changes("step", presets_);
    w_ = job_workload(yaml_, f_.workload, job().nodes);
    schedule_ = step::schedule_from(structure_of(w_, presets_));
    step::validate(schedule_, world.size());
    if (f_.compare_model) refuse_unlike_comparison(f_, job().nodes);
    // The model's fabric is checked before the measurement, not after it:
    // a missing file or scope must not cost a whole run. Rank 0 reads it;
    // what it finds is agreed before anything collective follows.
    std::string error;
    if (f_.compare_model && world.rank() == 0) {
      try {
        model::Workload stated = w_;
        if (!f_.node.empty()) stated.cluster.node = f_.node;
        (void)model::fabric_for(stated, f_.network, presets_);
      } catch (const UsageError& e) {
        error = e.what();
      }
    }
    if (error = agree_on_error(world, error); !error.empty()) throw UsageError(error);
    compute_ = make_compute(world, *job().backend, f_);
    if (f_.backend == "nccl") products_ = layer_products(world, w_, presets_);
  }
  void watch(ProgressBoard& board) override { board_ = &board; }
  // The calls' groups (NCCL's initialisation and splits) are opened under the
  // watchdog: a hang there ends with the timeout, not the scheduler's limit.
  void prepare_watched() override {
    executor_ = std::make_unique<step::Executor>(job().world, *job().backend, *compute_.kernel, schedule_,
                                                 compute_.dtype, step::ExecutorOptions{.board = board_});
  }
  void measure() override { report_ = executor_->run(f_.steps, f_.warmup); }
  Summary close(double seconds) override {
    StepView view{
        w_, schedule_, report_, compute_.kernel->describe(), f_.backend, {}, products_ ? &*products_ : nullptr};
    std::string model_error;  // checked before measuring, so only what that check could not foresee
    if (f_.compare_model) {
      try {
        view.predictions = step::predictions_for(w_, report_, presets_, f_.network, f_.node);
      } catch (const UsageError& e) {
        model_error = e.what();
      }
    }
    std::fputs(step_text(view).c_str(), stdout);
    for (const auto& line : step_lines(view)) job().sinks.record_line(line);  // the measurement stands either way
    Summary summary;
    summary.elapsed_s = seconds;
    summary.exit_code = kExitOk;
    if (!model_error.empty()) {
      user_log().error("fabricbench step: --compare-model: {}", model_error);
      summary.status = "error";
      summary.reason = "--compare-model: " + model_error;
      summary.report = watch::error_report(0, host_name(), model_error);
      summary.exit_code = kExitRunError;
    }
    return summary;
  }
  int report(int code) override {
    if (f_.calibrated.empty() || code != kExitOk) return code;
    const std::string calibrated = model::calibrated_workload_yaml(yaml_, step::calibration_factor(schedule_, report_));
    return output_failure("step", write_file_atomically(f_.calibrated, calibrated), code);
  }

 private:
  const StepFlags& f_;
  const std::string& yaml_;
  model::Presets presets_;
  model::Workload w_;
  step::StepSchedule schedule_;
  StepCompute compute_;
  std::optional<LayerProducts> products_;
  ProgressBoard* board_ = nullptr;
  std::unique_ptr<step::Executor> executor_;
  step::StepReport report_;
};

}  // namespace

int step_main(int argc, char** argv) {
  CLI::App app{"Run the training step a workload describes on this job's ranks and measure its communication share.",
               "fabricbench step"};
  StepFlags flags;
  add_step_flags(app, flags);
  const auto validate = [&] {
    if (flags.steps < 1 || flags.warmup < 0) throw UsageError("--steps must be 1 or more and --warmup 0 or more");
    if (!flags.compare_model && (!flags.network.empty() || !flags.node.empty()))
      throw UsageError("--network and --node describe the model's fabric: add --compare-model");
    check_step_backend(app, flags);
    (void)timeout_seconds(flags.timeout);
    check_injected(flags.inject);
  };
  const auto outputs = [&] {
    return Outputs{{{flags.out, "--out"}, {flags.calibrated, "--calibrated-workload"}}, flags.overwrite};
  };
  const CommandEntry entry{
      "step", app, validate, outputs, [] { return Verbosity::normal; }, {}, watchdog_runs(flags.timeout)};
  return command_main(&argc, &argv, entry,
                      [&](const Comm& world) {
                        std::string read_error;
                        const std::string yaml = shared_workload_text(world, flags.workload, read_error);
                        if (const std::string error = agree_on_error(world, read_error); !error.empty())
                          return usage_exit(world, "step", error);
                        StepCommand command(flags, yaml);
                        return measure(world, argc, argv,
                                       {.command = "step",
                                        .backend = flags.backend,
                                        .inject = flags.inject,
                                        .timeout = watch::TimeoutPolicy{timeout_seconds(flags.timeout)},
                                        .device = flags.device,
                                        .record = flags.out,
                                        .overwrite = flags.overwrite},
                                       command);
                      });
}

}  // namespace fb::cli
