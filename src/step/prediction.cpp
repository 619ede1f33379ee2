#include "fabricbench/step/prediction.hpp"

#include "fabricbench/model/step.hpp"

namespace fb::step {
namespace {

// The compute time is inversely proportional to the stated rate, whichever
// form the workload states it in: for a GEMM curve (measured hardware) the
// share of it the step reaches, as --calibrated-workload scales it too.
void scale_rate(model::Workload& w, double factor) {
  if (w.tflops > 0) w.tflops *= factor;
  if (w.mfu > 0) w.mfu *= factor;
  if (w.gemm.of_gemm > 0) w.gemm.of_gemm *= factor;
}

// The factor on the GEMM rate (tflops, mfu, of_gemm) that makes the model's
// products take the measured time. Attention's kernel, where its GPU has a
// curve, keeps that curve's time: the rest of the products take up the
// difference. (A measured time inside the attention's own leaves nothing for
// them to take up: the plain ratio then.)
double gemm_rate_factor(double planned_us, double attention_us, double measured_us) {
  if (attention_us <= 0 || measured_us <= attention_us) return planned_us / measured_us;
  return (planned_us - attention_us) / (measured_us - attention_us);
}

Prediction predict(const model::Workload& w, const StepReport& measured, const model::Presets& presets,
                   const std::string& network, std::string basis) {
  const model::StepCost s = model::predict_step(w, model::fabric_for(w, network, presets), presets);
  Prediction p;
  p.basis = std::move(basis);
  p.network = s.network;
  p.node = s.node;
  p.compute_us = s.compute_us;
  p.attention_us = s.attention_us;
  p.non_gemm_us = s.non_gemm_us;
  p.optimizer_us = s.optimizer_us;
  p.comm_us = s.comm_us;
  p.exposed_us = s.exposed_us;
  // What the executor runs, as the measured step holds it: every compute
  // part and the exposed communication (no bubble, no stage imbalance).
  const double all_compute_us = s.compute_us + s.non_gemm_us;
  p.step_us = all_compute_us + s.exposed_us;
  p.comm_share = s.comm_us / (all_compute_us + s.comm_us);
  p.exposed_share = s.exposed_us / p.step_us;
  p.efficiency = all_compute_us / p.step_us;
  p.step_diff_pct = 100.0 * (p.step_us - measured.step_us()) / measured.step_us();
  return p;
}

}  // namespace

// The products alone: the rate scaled is the products' (the non-GEMM work is
// priced at the GPU's memory bandwidth, which no compute rate moves).
double calibration_factor(const StepSchedule& planned, const StepReport& measured) {
  return gemm_rate_factor(planned.compute_us, planned.attention_us, measured.parts.products_us);
}

std::vector<Prediction> predictions_for(const model::Workload& w, const StepReport& measured,
                                        const model::Presets& presets, const std::string& network,
                                        const std::string& node) {
  model::Workload stated = w;
  if (!node.empty()) stated.cluster.node = node;
  std::vector<Prediction> out{predict(stated, measured, presets, network, "workload rate")};
  model::Workload at_measured = stated;
  scale_rate(at_measured,
             gemm_rate_factor(out.front().compute_us, out.front().attention_us, measured.parts.products_us));
  out.push_back(predict(at_measured, measured, presets, network, "measured compute"));
  return out;
}

}  // namespace fb::step
