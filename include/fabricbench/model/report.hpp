// The model's answers as tables (text, CSV) and JSON. JSON keeps full
// precision and is what scripts/plot.py reads.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <utility>
#include <vector>

#include "fabricbench/model/compare.hpp"
#include "fabricbench/model/data_loading.hpp"
#include "fabricbench/model/fit.hpp"
#include "fabricbench/model/memory.hpp"
#include "fabricbench/model/mixed.hpp"
#include "fabricbench/model/quotes.hpp"
#include "fabricbench/model/step.hpp"
#include "fabricbench/model/table.hpp"
#include "fabricbench/core/fact.hpp"

namespace fb::model {

using json = nlohmann::ordered_json;

Table fit_table(const std::vector<Curve>& curves);
json fit_json(const std::vector<Curve>& curves, const std::string& results_path);

// One workload on several fabrics: a row per network, a note per network on
// the bandwidth that would hide its communication.
Table steps_table(const std::vector<StepCost>& steps);
// Every collective of one step.
Table step_items_table(const StepCost& step);
json step_json(const StepCost& step);
json steps_json(const std::string& workload, const std::vector<StepCost>& steps);

// `model step --measured-step-s`: the framework's busbw share that gives the
// measured step (calibrate.hpp), as a note under the table and a
// "busbw_share_fit" object in the JSON.
struct ShareFit {
  std::string group;
  double measured_step_s = 0;
  Fact<double> share;
};
void add_share_fit(Table& t, json& j, const ShareFit& fit);

// Mixed GPU models: a row per group (its step alone, its wait in the
// data-parallel step), then the uniform and proportional pipeline splits.
Table mixed_table(const MixedStep& m);
json mixed_json(const std::string& workload, const MixedStep& m);

using Scaling = std::vector<std::pair<std::string, std::vector<ScalePoint>>>;  // network label -> points
Table scale_table(const Scaling& scaling);
json scale_json(const std::string& workload, const Scaling& scaling);

// Data loading against the step, per node count (model/data_loading.hpp).
Table data_table(const std::vector<DataPoint>& points, const std::string& network);
json data_json(const std::string& workload, const std::string& network, const std::vector<DataPoint>& points);

Table memory_table(const std::vector<MemoryFit>& fits, int workload_zero);
json memory_json(const std::string& workload, const std::string& gpu, const std::vector<MemoryFit>& fits);

Table quotes_table(const std::vector<QuoteResult>& ranked, const std::string& currency);
json quotes_json(const std::string& workload, const std::vector<QuoteResult>& ranked, const std::string& currency);

Table compare_table(const Comparison& c, const std::string& a_path, const std::string& b_path);
json compare_json(const Comparison& c, const std::string& a_path, const std::string& b_path);

Table presets_table(const Presets& presets);
json presets_json(const Presets& presets);

// Notes "assumption: ..." for what every row assumes, then "assumption
// (LABEL): ..." for what only some rows do.
void add_assumptions(Table& table, const std::vector<std::pair<std::string, const StepCost*>>& rows);

// The answer in the asked format: aligned text, CSV, or indented JSON.
std::string render(Format format, const Table& table, const json& j);

}  // namespace fb::model
