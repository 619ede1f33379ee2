#include "model_workloads.hpp"

namespace fb::test {

model::Workload small_workload() {
  model::Workload w;
  w.name = "small";
  w.params = 1ull << 30;
  w.layers = 16;
  w.hidden = 2048;
  w.heads = 16;
  w.seq_len = 1024;
  w.global_batch = 16;
  w.micro_batch = 1;
  w.tflops = 150;
  w.cluster.gpu = w.compute_gpu = "a100-80gb";
  w.cluster.nodes = 2;
  w.cluster.gpus_per_node = 8;
  return w;
}

model::Fabric preset_fabric(const model::Workload& w, const std::string& network) {
  return model::fabric_for(w, network, model::builtin_presets());
}

model::StepCost step_on(const model::Workload& w, const std::string& network) {
  return model::predict_step(w, preset_fabric(w, network), model::builtin_presets());
}

model::Workload seven_billion_on(const std::string& gpu, const std::string& compute) {
  return model::parse_workload(
      "model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
      "training: {global_batch: 64, micro_batch: 2, dtype: bf16}\n"
      "compute: " +
      compute + "\ncluster: {gpu: " + gpu + ", nodes: 1, gpus_per_node: 8}\n");
}

model::Workload profile_workload(const std::string& name) {
  return model::load_workload(std::string(FB_SOURCE_DIR) + "/profiles/workloads/" + name);
}

}  // namespace fb::test
