// `fabricbench model`: fit, step, scale, memory, quotes, presets. Runs alone
// (no MPI_Init): it reads results files, presets and YAML, and prints.
#include <nlohmann/json.hpp>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "alone.hpp"
#include "commands.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/calibrate.hpp"
#include "fabricbench/model/report.hpp"
#include "fabricbench/model/units.hpp"
#include "preset_flags.hpp"

namespace fb::cli {
namespace {

using namespace fb::model;

struct ModelFlags {
  std::string results, scope, workload, quotes, node, gpu, storage, format = "text";
  PresetFlags presets;   // --presets DIR, --presets-add FILE
  std::string gpu_mix;   // model step --gpus: mixed GPU models
  std::string mix_from;  // model step --gpus-from: the mix a topo/run record's inventory holds
  bool mixed = false;    // --gpus or --gpus-from given (even empty: an empty mix is an error)
  std::vector<std::string> data_nodes;  // model data: "" = the node counts the storage record measured
  std::string exposed_target = "5%";
  double measured_step_s = 0;         // model step --measured-step-s
  bool measured = false;              // --measured-step-s given
  std::string busbw_group = "dp";     // the group whose busbw share it fits
  std::vector<std::string> networks;
  std::vector<std::string> nodes{"1", "2", "4", "8", "16", "32", "64", "128"};
};

void add_target(CLI::App* sub, ModelFlags& f) {
  sub->add_option("--exposed-target", f.exposed_target,
                  "exposed share of the step the bandwidth target aims under (0.05 or 5%)")
      ->capture_default_str();
}

double target_of(const ModelFlags& f) {
  const double t = parse_fraction(f.exposed_target, "--exposed-target");
  if (t <= 0 || t >= 1) throw UsageError(fmt::format("--exposed-target '{}': above 0% and below 100%", f.exposed_target));
  return t;
}

// "--nodes 1,2,4": whole numbers from 1 to 100000 (0 divided a GPU count, a
// negative count gave an infinite step).
std::vector<int> node_counts(const ModelFlags& f) {
  std::vector<int> out;
  for (const auto& text : f.nodes) {
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text.empty() || n < 1 || n > 100000)
      throw UsageError(fmt::format("--nodes '{}': node counts are whole numbers from 1 to 100000, comma-separated",
                                   text));
    out.push_back(static_cast<int>(n));
  }
  return out;
}

void add_common(CLI::App* sub, ModelFlags& f) {
  sub->add_option("--format", f.format, "text, json or csv")->capture_default_str();
  add_preset_flags(sub, f.presets);
}

void add_workload(CLI::App* sub, ModelFlags& f) {
  sub->add_option("-w,--workload", f.workload, "workload YAML (profiles/workloads/)")->required();
}

void add_networks(CLI::App* sub, ModelFlags& f) {
  sub->add_option("--network", f.networks,
                  "network between nodes, repeatable: NICs x preset (1x10gbe, 8x400g-ndr-ib), a results file measured across "
                  "nodes, or FILE@SCOPE (default: the workload's cluster: network)");
  sub->add_option("--node", f.node, "fabric inside the node: a node preset or a results file (default: the GPU's)");
}

// The presets, saying on stderr what --presets-add (or the quotes file's
// presets:) changed.
Presets presets_of(const ModelFlags& f, const std::string& first = "") {
  Presets p = cli::presets_of(f.presets, first);
  say_preset_changes("model", p);
  return p;
}

Workload workload_of(const ModelFlags& f) {
  Workload w = load_workload(f.workload);
  if (!f.node.empty()) w.cluster.node = f.node;
  if (!f.gpu.empty()) w.cluster.gpu = f.gpu;
  return w;
}

std::vector<std::string> networks_of(const ModelFlags& f, const Workload& w) {
  if (!f.networks.empty()) return f.networks;
  return {w.cluster.network};  // "" on one node; fabric_for says what to give otherwise
}

int print(const ModelFlags& f, const Table& t, const json& j) {
  std::fputs(render(parse_format(f.format), t, j).c_str(), stdout);
  return kExitOk;
}

int run_fit(const ModelFlags& f) {
  const Results results = load_results(f.results);
  std::vector<Curve> curves;
  for (auto& c : fit_curves(results))
    if (f.scope.empty() || c.scope == f.scope) curves.push_back(std::move(c));
  if (curves.empty()) throw UsageError(fmt::format("{}: no measurement rows{}", f.results,
                                                   f.scope.empty() ? "" : " at scope '" + f.scope + "'"));
  return print(f, fit_table(curves), fit_json(curves, f.results));
}

// --gpus a100-80gb:8,rtx-4090:8: the data-parallel step of the mix and the
// pipeline splits, on the first network given.
// --gpus-from RECORD: the same, with the mix topo found on the record's nodes.
int run_mixed_step(const ModelFlags& f, const Presets& presets, const Workload& w) {
  const bool from_record = !f.mix_from.empty();
  const auto mix = from_record ? gpu_mix_of(load_results(f.mix_from), presets, "--gpus-from")
                               : parse_gpu_mix(f.gpu_mix, presets, "--gpus");
  const auto nets = networks_of(f, w);
  if (nets.size() > 1)
    throw UsageError(fmt::format("{}: give one --network (the mix is predicted on one fabric)",
                                 from_record ? "--gpus-from" : "--gpus"));
  const MixedStep m = predict_mixed(w, mix, fabric_for(w, nets.front(), presets), presets, target_of(f));
  return print(f, mixed_table(m), mixed_json(w.name, m));
}

int run_step(const ModelFlags& f) {
  const Presets presets = presets_of(f);
  const Workload w = workload_of(f);
  if (f.mixed) return run_mixed_step(f, presets, w);
  const auto nets = networks_of(f, w);
  if (f.measured && nets.size() > 1)
    throw UsageError("--measured-step-s: give one --network (the step was measured on one)");
  if (f.measured && (!(f.measured_step_s > 0) || !std::isfinite(f.measured_step_s)))
    throw UsageError(fmt::format("--measured-step-s {}: a step time in seconds, above 0", f.measured_step_s));
  std::vector<Fabric> fabrics;
  std::vector<StepCost> steps;
  const double target = target_of(f);
  for (const auto& net : nets) {
    fabrics.push_back(fabric_for(w, net, presets));
    steps.push_back(predict_step(w, fabrics.back(), presets, target));
  }
  Table t = steps.size() == 1 ? step_items_table(steps.front()) : steps_table(steps);
  json j = steps_json(w.name, steps);
  if (f.measured)
    add_share_fit(t, j,
                  {f.busbw_group, f.measured_step_s,
                   fit_busbw_share(w, fabrics.front(), presets, f.busbw_group, f.measured_step_s * 1e6)});
  return print(f, t, j);
}

int run_scale(const ModelFlags& f) {
  const Presets presets = presets_of(f);
  const Workload w = workload_of(f);
  const std::vector<int> nodes = node_counts(f);
  const double target = target_of(f);
  Scaling scaling;
  for (const auto& net : networks_of(f, w)) {
    const Fabric fabric = fabric_for(w, net, presets);
    scaling.emplace_back(fabric.inter.label, predict_scaling(w, fabric, presets, nodes, target));
  }
  // A table of reasons and no figure is not an answer (it once exited 0).
  const auto priced = [](const ScalePoint& p) { return p.why.empty(); };
  if (std::none_of(scaling.begin(), scaling.end(),
                   [&](const auto& net) { return std::any_of(net.second.begin(), net.second.end(), priced); }))
    throw UsageError(fmt::format("--nodes: no node count given can run this workload ({}); give node counts whose GPUs "
                                 "the workload's parallelism divides",
                                 scaling.front().second.front().why));
  return print(f, scale_table(scaling), scale_json(w.name, scaling));
}

// The workload's data loading against the storage record, at the node counts
// it measured (or --nodes), with the step predicted on the first network.
int run_data(ModelFlags f) {
  const Presets presets = presets_of(f);
  const Workload w = workload_of(f);
  const Results record = load_results(f.storage);
  if (record.storage.empty())
    throw UsageError(fmt::format("--storage '{}' has no storage lines: give a `fabricbench storage --out` record",
                                 f.storage));
  if (f.data_nodes.empty()) {
    for (const auto& r : storage_rates(record.storage, "path", w.data.pattern)) f.data_nodes.push_back(std::to_string(r.nodes));
  }
  if (!f.data_nodes.empty()) f.nodes = f.data_nodes;
  const std::string net = networks_of(f, w).front();
  const Fabric fabric = fabric_for(w, net, presets);
  const auto points = data_loading(w, predict_scaling(w, fabric, presets, node_counts(f), target_of(f)), record.storage);
  return print(f, data_table(points, fabric.inter.label), data_json(w.name, fabric.inter.label, points));
}

int run_memory(const ModelFlags& f) {
  const Presets presets = presets_of(f);
  const Workload w = workload_of(f);
  const GpuPreset& gpu = presets.gpu(w.cluster.gpu, f.gpu.empty() ? "workload: cluster: gpu" : "--gpu");
  const auto fits = memory_fit(w, gpu);
  return print(f, memory_table(fits, w.zero), memory_json(w.name, gpu.name, fits));
}

int run_quotes(const ModelFlags& f) {
  const QuoteSet set = load_quotes(f.quotes);
  const Presets presets = presets_of(f, set.presets);
  const Workload w = workload_of(f);
  const auto base = std::filesystem::path(f.quotes).parent_path().string();
  const auto ranked = evaluate_quotes(set, w, presets, base, target_of(f));
  return print(f, quotes_table(ranked, set.currency), quotes_json(w.name, ranked, set.currency));
}

}  // namespace

int model_main(int argc, char** argv) {
  CLI::App app{"Turn measured curves or presets into a training job's communication share, efficiency, time and "
               "cost. Runs alone, without mpirun.",
               "fabricbench model"};
  app.require_subcommand(1);
  ModelFlags f;
  auto* fit = app.add_subcommand("fit", "alpha (us), beta (GB/s), n_half and fit error per op and scope");
  fit->add_option("results", f.results, "results file (.jsonl) from `fabricbench run --out`")->required();
  fit->add_option("--scope", f.scope, "only this scope");
  auto* step = app.add_subcommand("step", "one training step: compute, each collective, exposed communication");
  auto* gpus = step->add_option("--gpus", f.gpu_mix,
                   "mixed GPU models, GPU:COUNT comma-separated in pipeline-stage order (a100-80gb:8,rtx-4090:8): the "
                   "data-parallel step at the slowest model's pace, each model's wait, and the uniform and "
                   "rate-proportional pipeline splits");
  auto* gpus_from = step->add_option("--gpus-from", f.mix_from,
                                     "the mix a `fabricbench topo --out` or `run --out` record found: each node's GPUs "
                                     "by the model NVML names, mapped to presets by their nvml_names")
                        ->excludes(gpus);
  auto* measured = step->add_option("--measured-step-s", f.measured_step_s,
                                    "a step time your framework measured on this workload and network: prints the "
                                    "share of NCCL's bus bandwidth its collectives reach (busbw_share)")
                       ->excludes(gpus)
                       ->excludes(gpus_from);
  step->add_option("--busbw-group", f.busbw_group, "the group --measured-step-s fits: tp, dp or pp")
      ->needs(measured)
      ->capture_default_str();
  auto* scale = app.add_subcommand("scale", "the same job on other node counts: efficiency versus nodes");
  scale->add_option("--nodes", f.nodes, "node counts, comma-separated")->delimiter(',')->capture_default_str();
  auto* memory = app.add_subcommand("memory", "memory per GPU for ZeRO 0-3 and the smallest DP or TP that fits");
  memory->add_option("--gpu", f.gpu, "GPU preset (default: the workload's)");
  auto* quotes = app.add_subcommand("quotes", "rank price quotes by the job's total cost, with the winner and why");
  quotes->add_option("-q,--quotes", f.quotes, "quotes YAML (profiles/quotes/)")->required();
  auto* data = app.add_subcommand("data", "does data loading at the storage record's measured rate keep up with the "
                                          "step at each node count");
  data->add_option("--storage", f.storage, "a `fabricbench storage --out` record of the dataset's filesystem")
      ->required();
  data->add_option("--nodes", f.data_nodes, "node counts (default: those the storage record measured)")
      ->delimiter(',');
  auto* presets = app.add_subcommand("presets", "list the network, node and GPU presets with their sources");
  const auto subs = {fit, step, scale, memory, quotes, data, presets};
  for (auto* sub : subs) add_common(sub, f);
  for (auto* sub : {step, scale, memory, quotes, data}) add_workload(sub, f);
  for (auto* sub : {step, scale, data}) add_networks(sub, f);
  for (auto* sub : {step, scale, quotes, data}) add_target(sub, f);
  const auto is_sub = [&](const char* word) {
    return std::any_of(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->get_name() == word; });
  };
  if (argc < 2) return list_subcommands("model", app);
  return run_alone("model", app, [&] {
    if (argc > 1 && argv[1][0] != '-' && !is_sub(argv[1]))
      throw UsageError(fmt::format("unknown subcommand '{}'; choose one of: {}", argv[1], subcommand_names(app)));
    app.parse(argc, argv);
    parse_format(f.format);
    f.mixed = gpus->count() > 0 || gpus_from->count() > 0;
    f.measured = measured->count() > 0;
    if (fit->parsed()) return run_fit(f);
    if (step->parsed()) return run_step(f);
    if (scale->parsed()) return run_scale(f);
    if (memory->parsed()) return run_memory(f);
    if (quotes->parsed()) return run_quotes(f);
    if (data->parsed()) return run_data(f);
    const Presets p = presets_of(f);
    return print(f, presets_table(p), presets_json(p));
  });
}

}  // namespace fb::cli
