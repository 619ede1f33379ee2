// The readers behind `fabricbench diagnose`: every GPU through NVML (loaded
// at run time by topo), every NIC's byte counters through sysfs, and the
// job's process through /proc. One call of sample() reads each once; a
// reading that fails is kept as unknown with its reason, and the first
// failure of each source on each GPU becomes a note (the rest goes on).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fabricbench/diagnose/samples.hpp"
#include "fabricbench/topo/nvml.hpp"
#include "fabricbench/topo/sysfs.hpp"

namespace fb::diagnose {

// The job's process and its descendants, from /proc (under `proc_root`).
class ProcessReader {
 public:
  ProcessReader(int pid, std::string proc_root = "/proc");
  // "" when the process was running at the start; else why not.
  [[nodiscard]] const std::string& error() const { return series_.error; }
  // One reading; a process that ended gives a note once.
  void sample(double t_s, std::vector<std::string>& notes);
  const ProcessSeries& series() const { return series_; }

 private:
  std::string root_;
  ProcessSeries series_;
  bool ended_noted_ = false;
};

class Sampler {
 public:
  // `pid`: also read this process (ProcessReader); its error, if any, is the first note.
  Sampler(topo::Nvml& nvml, const topo::Sysfs& sysfs, std::optional<int> pid = std::nullopt,
          std::string proc_root = "/proc");
  void sample(double t_s);
  // Notes added since the last call (for printing as they happen).
  std::vector<std::string> new_notes();
  // The series so far; the caller fills node, host, window and iterations.
  NodeSamples samples() const;

 private:
  void sample_gpu(std::size_t i, double t_s);
  void sample_nics(double t_s);
  // The first failure of `what` on GPU `gpu` becomes a note.
  template <typename T>
  Fact<double> keep(const Fact<T>& f, int gpu, const char* what, double scale = 1.0);

  topo::Nvml& nvml_;
  const topo::Sysfs& sysfs_;
  NodeSamples node_;
  std::vector<std::string> nic_paths_tx_, nic_paths_rx_;
  std::vector<double> nic_scale_;
  std::optional<ProcessReader> process_;
  std::set<std::string> noted_;
  std::size_t reported_notes_ = 0;
};

}  // namespace fb::diagnose
