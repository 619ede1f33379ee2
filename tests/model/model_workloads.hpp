// Workloads built in code for the model's tests (the YAML parser has its own
// tests), and the fabric of a cluster from presets.
#pragma once

#include <string>

#include "fabricbench/model/step.hpp"

namespace fb::test {

// 2 nodes x 8 A100 80GB, DDP, a 2^30-parameter model, one micro-batch, 150
// TFLOP/s, no overlap; tests change what they exercise.
model::Workload small_workload();

// Presets: the node of the workload's GPU and `network` between nodes.
model::Fabric preset_fabric(const model::Workload& w, const std::string& network);

model::StepCost step_on(const model::Workload& w, const std::string& network);

// A 6.7B-parameter transformer (32 x 4096, 32 heads, 4096 tokens, micro-batch
// 2, bf16) on one node of 8 `gpu`, its compute as `compute` states it (YAML).
model::Workload seven_billion_on(const std::string& gpu, const std::string& compute);

// A workload file from profiles/workloads/.
model::Workload profile_workload(const std::string& name);

}  // namespace fb::test
