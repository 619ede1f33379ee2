// Sample series as JSON (--samples-out, --replay, the test fixtures): every
// reading a number or null, the first reason per figure under "unknown".
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fabricbench/diagnose/report.hpp"

namespace fb::diagnose {
namespace {

using json = nlohmann::ordered_json;

// Writes facts as numbers or null, remembering the first reason per key.
class FactWriter {
 public:
  template <typename T>
  json operator()(const char* key, const Fact<T>& f) {
    if (f) return json(*f);
    if (!unknown_.contains(key)) unknown_[key] = f.why();
    return nullptr;
  }
  json unknown() const { return unknown_; }

 private:
  json unknown_ = json::object();
};

// Reads them back: null gives the recorded reason.
class FactReader {
 public:
  FactReader(const json& owner, std::string where) : where_(std::move(where)) {
    if (const auto it = owner.find("unknown"); it != owner.end() && it->is_object()) unknown_ = *it;
  }
  template <typename T>
  Fact<T> operator()(const json& obj, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      const auto why = unknown_.find(key);
      return Fact<T>::unknown(why != unknown_.end() && why->is_string() ? why->get<std::string>()
                                                                          : "unknown in the recorded series");
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) throw bad(key);
    } else if (!it->is_number()) {
      throw bad(key);
    }
    return it->get<T>();
  }

 private:
  std::runtime_error bad(const char* key) const {
    return std::runtime_error(fmt::format("{}: '{}' has the wrong type", where_, key));
  }
  std::string where_;
  json unknown_ = json::object();
};

const json& array_at(const json& j, const char* key, const std::string& where) {
  static const json empty = json::array();
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return empty;
  if (!it->is_array()) throw std::runtime_error(fmt::format("{}: '{}' is not an array", where, key));
  return *it;
}

json gpu_json(const GpuSeries& g) {
  FactWriter w;
  json info = {{"index", g.info.index},
               {"model", w("model", g.info.model)},
               {"bus_id", w("bus_id", g.info.bus_id)},
               {"memory_total_bytes", w("memory_total_bytes", g.info.memory_total_bytes)},
               {"max_sm_clock_mhz", w("max_sm_clock_mhz", g.info.max_sm_clock_mhz)},
               {"power_limit_w", w("power_limit_w", g.info.power_limit_w)},
               {"nvlink_peak_gbps", w("nvlink_peak_gbps", g.info.nvlink_peak_gbps)}};
  json samples = json::array();
  for (const auto& s : g.samples)
    samples.push_back({{"t_s", s.t_s},
                       {"sm_util_pct", w("sm_util_pct", s.sm_util_pct)},
                       {"mem_util_pct", w("mem_util_pct", s.mem_util_pct)},
                       {"memory_used_bytes", w("memory_used_bytes", s.memory_used_bytes)},
                       {"pcie_tx_gbps", w("pcie_tx_gbps", s.pcie_tx_gbps)},
                       {"pcie_rx_gbps", w("pcie_rx_gbps", s.pcie_rx_gbps)},
                       {"nvlink_tx_kib", w("nvlink_tx_kib", s.nvlink_tx_kib)},
                       {"nvlink_rx_kib", w("nvlink_rx_kib", s.nvlink_rx_kib)},
                       {"sm_clock_mhz", w("sm_clock_mhz", s.sm_clock_mhz)},
                       {"clock_reasons", w("clock_reasons", s.clock_reasons)},
                       {"power_w", w("power_w", s.power_w)},
                       {"temperature_c", w("temperature_c", s.temperature_c)}});
  return {{"info", std::move(info)}, {"samples", std::move(samples)}, {"unknown", w.unknown()}};
}

GpuSeries gpu_from(const json& j, const std::string& where) {
  const FactReader r(j, where);
  const auto it = j.find("info");
  if (it == j.end() || !it->is_object()) throw std::runtime_error(where + ": no 'info' object");
  const json& info = *it;
  GpuSeries g;
  g.info.index = info.value("index", 0);
  g.info.model = r.operator()<std::string>(info, "model");
  g.info.bus_id = r.operator()<std::string>(info, "bus_id");
  g.info.memory_total_bytes = r.operator()<double>(info, "memory_total_bytes");
  g.info.max_sm_clock_mhz = r.operator()<double>(info, "max_sm_clock_mhz");
  g.info.power_limit_w = r.operator()<double>(info, "power_limit_w");
  g.info.nvlink_peak_gbps = r.operator()<double>(info, "nvlink_peak_gbps");
  for (const auto& s : array_at(j, "samples", where)) {
    if (!s.is_object()) throw std::runtime_error(where + ": a sample is not an object");
    GpuSample x;
    x.t_s = s.value("t_s", 0.0);
    x.sm_util_pct = r.operator()<double>(s, "sm_util_pct");
    x.mem_util_pct = r.operator()<double>(s, "mem_util_pct");
    x.memory_used_bytes = r.operator()<double>(s, "memory_used_bytes");
    x.pcie_tx_gbps = r.operator()<double>(s, "pcie_tx_gbps");
    x.pcie_rx_gbps = r.operator()<double>(s, "pcie_rx_gbps");
    x.nvlink_tx_kib = r.operator()<double>(s, "nvlink_tx_kib");
    x.nvlink_rx_kib = r.operator()<double>(s, "nvlink_rx_kib");
    x.sm_clock_mhz = r.operator()<double>(s, "sm_clock_mhz");
    x.clock_reasons = r.operator()<std::uint64_t>(s, "clock_reasons");
    x.power_w = r.operator()<double>(s, "power_w");
    x.temperature_c = r.operator()<double>(s, "temperature_c");
    g.samples.push_back(std::move(x));
  }
  return g;
}

json nic_json(const NicSeries& n) {
  FactWriter w;
  json samples = json::array();
  for (const auto& s : n.samples)
    samples.push_back({{"t_s", s.t_s}, {"tx_bytes", w("tx_bytes", s.tx_bytes)}, {"rx_bytes", w("rx_bytes", s.rx_bytes)}});
  return {{"name", n.name},
          {"kind", n.kind},
          {"peak_gbps", w("peak_gbps", n.peak_gbps)},
          {"samples", std::move(samples)},
          {"unknown", w.unknown()}};
}

NicSeries nic_from(const json& j, const std::string& where) {
  const FactReader r(j, where);
  NicSeries n;
  n.name = j.value("name", "");
  n.kind = j.value("kind", "");
  n.peak_gbps = r.operator()<double>(j, "peak_gbps");
  for (const auto& s : array_at(j, "samples", where))
    n.samples.push_back({s.value("t_s", 0.0), r.operator()<double>(s, "tx_bytes"), r.operator()<double>(s, "rx_bytes")});
  return n;
}

}  // namespace

nlohmann::ordered_json to_json(const NodeSamples& node) {
  json j = {{"node", node.node},         {"host", node.host},       {"window_s", node.window_s},
            {"interval_s", node.interval_s}, {"gpu_reason", node.gpu_reason}, {"gpus", json::array()},
            {"nics", json::array()}};
  for (const auto& g : node.gpus) j["gpus"].push_back(gpu_json(g));
  for (const auto& n : node.nics) j["nics"].push_back(nic_json(n));
  if (const auto& p = node.process) {
    FactWriter w;
    json samples = json::array();
    for (const auto& s : p->samples)
      samples.push_back({{"t_s", s.t_s}, {"alive", s.alive}, {"cpu_s", w("cpu_s", s.cpu_s)}, {"processes", s.processes}});
    j["process"] = {{"pid", p->pid}, {"name", p->name}, {"error", p->error}, {"samples", samples}, {"unknown", w.unknown()}};
  }
  if (const auto& it = node.iterations)
    j["iterations"] = {{"source", it->source}, {"format", it->format}, {"unit", it->unit},
                       {"values", it->values}, {"note", it->note},     {"error", it->error}};
  j["notes"] = node.notes;
  return j;
}

NodeSamples node_samples_from_json(const nlohmann::ordered_json& j) {
  if (!j.is_object()) throw std::runtime_error("a node's samples are not a JSON object");
  NodeSamples n;
  try {
    n.node = j.value("node", 0);
    n.host = j.value("host", "");
    n.window_s = j.value("window_s", 0.0);
    n.interval_s = j.value("interval_s", 0.0);
    n.gpu_reason = j.value("gpu_reason", "");
    const std::string where = fmt::format("node {} ({})", n.node, n.host);
    for (const auto& g : array_at(j, "gpus", where)) n.gpus.push_back(gpu_from(g, where + " gpu"));
    for (const auto& x : array_at(j, "nics", where)) n.nics.push_back(nic_from(x, where + " nic"));
    if (const auto it = j.find("process"); it != j.end() && it->is_object()) {
      const FactReader r(*it, where + " process");
      ProcessSeries p;
      p.pid = it->value("pid", 0);
      p.name = it->value("name", "");
      p.error = it->value("error", "");
      for (const auto& s : array_at(*it, "samples", where))
        p.samples.push_back({s.value("t_s", 0.0), s.value("alive", false), r.operator()<double>(s, "cpu_s"),
                             s.value("processes", 0)});
      n.process = std::move(p);
    }
    if (const auto it = j.find("iterations"); it != j.end() && it->is_object()) {
      IterSeries s;
      s.source = it->value("source", "");
      s.format = it->value("format", "");
      s.unit = it->value("unit", "s");
      s.values = it->value("values", std::vector<double>{});
      s.note = it->value("note", "");
      s.error = it->value("error", "");
      n.iterations = std::move(s);
    }
    n.notes = j.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("node samples: {}", e.what()));
  }
  return n;
}

}  // namespace fb::diagnose
