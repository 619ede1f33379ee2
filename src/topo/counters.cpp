// A node's error counters under a sysfs root (topo/counters.hpp).
#include "fabricbench/topo/counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <stdexcept>
#include <set>
#include <sstream>

#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/topo/ethtool.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

// The widths of InfiniBand's PortCounters attribute (IBA 1.3, 16.1.3.5):
// 16 bits for most, 8 for the link's own recovery and downed counts, 4 for
// the integrity and overrun counts. The driver's hw_counters, the netdev
// and ethtool statistics, SNMP and AER totals are 64-bit kernel counters.
constexpr std::array kCounters{
    CounterRow{Counter::symbol_error, "symbol_error", CounterSource::ib_port, "counters/symbol_error", 16},
    CounterRow{Counter::link_error_recovery, "link_error_recovery", CounterSource::ib_port,
               "counters/link_error_recovery", 8},
    CounterRow{Counter::link_downed, "link_downed", CounterSource::ib_port, "counters/link_downed", 8},
    CounterRow{Counter::port_rcv_errors, "port_rcv_errors", CounterSource::ib_port, "counters/port_rcv_errors", 16},
    CounterRow{Counter::port_rcv_remote_physical_errors, "port_rcv_remote_physical_errors", CounterSource::ib_port,
               "counters/port_rcv_remote_physical_errors", 16},
    CounterRow{Counter::port_xmit_discards, "port_xmit_discards", CounterSource::ib_port, "counters/port_xmit_discards",
               16},
    CounterRow{Counter::local_link_integrity_errors, "local_link_integrity_errors", CounterSource::ib_port,
               "counters/local_link_integrity_errors", 4},
    CounterRow{Counter::excessive_buffer_overrun_errors, "excessive_buffer_overrun_errors", CounterSource::ib_port,
               "counters/excessive_buffer_overrun_errors", 4},
    CounterRow{Counter::out_of_sequence, "out_of_sequence", CounterSource::ib_hw, "hw_counters/out_of_sequence", 64},
    CounterRow{Counter::packet_seq_err, "packet_seq_err", CounterSource::ib_hw, "hw_counters/packet_seq_err", 64},
    CounterRow{Counter::local_ack_timeout_err, "local_ack_timeout_err", CounterSource::ib_hw,
               "hw_counters/local_ack_timeout_err", 64},
    CounterRow{Counter::roce_adp_retrans, "roce_adp_retrans", CounterSource::ib_hw, "hw_counters/roce_adp_retrans", 64},
    CounterRow{Counter::np_cnp_sent, "np_cnp_sent", CounterSource::ib_hw, "hw_counters/np_cnp_sent", 64},
    CounterRow{Counter::rp_cnp_handled, "rp_cnp_handled", CounterSource::ib_hw, "hw_counters/rp_cnp_handled", 64},
    CounterRow{Counter::rx_drops, "rx_drops", CounterSource::ib_hw, "hw_counters/rx_drops", 64},
    CounterRow{Counter::rdma_read_wr_err, "rdma_read_wr_err", CounterSource::ib_hw, "hw_counters/rdma_read_wr_err", 64},
    CounterRow{Counter::rdma_write_wr_err, "rdma_write_wr_err", CounterSource::ib_hw, "hw_counters/rdma_write_wr_err",
               64},
    CounterRow{Counter::retrans_pkts, "retrans_pkts", CounterSource::ib_hw, "hw_counters/retrans_pkts", 64},
    CounterRow{Counter::retrans_timeout_events, "retrans_timeout_events", CounterSource::ib_hw,
               "hw_counters/retrans_timeout_events", 64},
    CounterRow{Counter::unresponsive_remote_events, "unresponsive_remote_events", CounterSource::ib_hw,
               "hw_counters/unresponsive_remote_events", 64},
    CounterRow{Counter::impaired_remote_conn_events, "impaired_remote_conn_events", CounterSource::ib_hw,
               "hw_counters/impaired_remote_conn_events", 64},
    CounterRow{Counter::rx_errors, "rx_errors", CounterSource::netdev, "statistics/rx_errors", 64},
    CounterRow{Counter::tx_errors, "tx_errors", CounterSource::netdev, "statistics/tx_errors", 64},
    CounterRow{Counter::rx_crc_errors, "rx_crc_errors", CounterSource::netdev, "statistics/rx_crc_errors", 64},
    CounterRow{Counter::rx_dropped, "rx_dropped", CounterSource::netdev, "statistics/rx_dropped", 64},
    CounterRow{Counter::tx_dropped, "tx_dropped", CounterSource::netdev, "statistics/tx_dropped", 64},
    CounterRow{Counter::carrier_changes, "carrier_changes", CounterSource::netdev, "carrier_changes", 64},
    CounterRow{Counter::rx_pause_frames, "rx_pause_frames", CounterSource::ethtool, "ETHTOOL_GSTATS", 64},
    CounterRow{Counter::tx_pause_frames, "tx_pause_frames", CounterSource::ethtool, "ETHTOOL_GSTATS", 64},
    CounterRow{Counter::tcp_retrans_segs, "tcp_retrans_segs", CounterSource::node_snmp, "proc/net/snmp", 64},
    CounterRow{Counter::aer_correctable, "aer_correctable", CounterSource::pci_aer, "aer_dev_correctable", 64},
    CounterRow{Counter::aer_nonfatal, "aer_nonfatal", CounterSource::pci_aer, "aer_dev_nonfatal", 64},
    CounterRow{Counter::aer_fatal, "aer_fatal", CounterSource::pci_aer, "aer_dev_fatal", 64},
    CounterRow{Counter::nvlink_crc_errors, "nvlink_crc_errors", CounterSource::nvml,
               "nvmlDeviceGetFieldValues NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 64},
    CounterRow{Counter::nvlink_replay_errors, "nvlink_replay_errors", CounterSource::nvml,
               "nvmlDeviceGetFieldValues NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", 64},
    CounterRow{Counter::nvlink_recovery_errors, "nvlink_recovery_errors", CounterSource::nvml,
               "nvmlDeviceGetFieldValues NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", 64},
    CounterRow{Counter::ecc_corrected, "ecc_corrected", CounterSource::nvml,
               "nvmlDeviceGetTotalEccErrors NVML_MEMORY_ERROR_TYPE_CORRECTED NVML_VOLATILE_ECC", 64},
    CounterRow{Counter::ecc_uncorrected, "ecc_uncorrected", CounterSource::nvml,
               "nvmlDeviceGetTotalEccErrors NVML_MEMORY_ERROR_TYPE_UNCORRECTED NVML_VOLATILE_ECC", 64},
    CounterRow{Counter::xid_events, "xid_events", CounterSource::nvml,
               "nvmlEventSetWait_v2 nvmlEventTypeXidCriticalError", 64},
    CounterRow{Counter::throttle_power_us, "throttle_power_us", CounterSource::nvml,
               "nvmlDeviceGetViolationStatus NVML_PERF_POLICY_POWER", 64},
    CounterRow{Counter::throttle_thermal_us, "throttle_thermal_us", CounterSource::nvml,
               "nvmlDeviceGetViolationStatus NVML_PERF_POLICY_THERMAL", 64},
};
static_assert(enum_cover::covers<Counter, kCounters>([](const CounterRow& r) { return r.counter; }),
              "kCounters describes every Counter in enum order");

// Each GPU counter of the record, the Nvml counter it reads and how many of
// NVML's units make one of the record's (throttle time: ns to us).
struct GpuCounterRow {
  GpuCounter nvml;
  Counter counter;
  std::uint64_t nvml_units_per_unit;
};
constexpr std::array kGpuCounters{
    GpuCounterRow{GpuCounter::nvlink_crc_flit_errors, Counter::nvlink_crc_errors, 1},
    GpuCounterRow{GpuCounter::nvlink_replay_errors, Counter::nvlink_replay_errors, 1},
    GpuCounterRow{GpuCounter::nvlink_recovery_errors, Counter::nvlink_recovery_errors, 1},
    GpuCounterRow{GpuCounter::ecc_corrected_volatile, Counter::ecc_corrected, 1},
    GpuCounterRow{GpuCounter::ecc_uncorrected_volatile, Counter::ecc_uncorrected, 1},
    GpuCounterRow{GpuCounter::xid_events, Counter::xid_events, 1},
    GpuCounterRow{GpuCounter::throttle_power_ns, Counter::throttle_power_us, 1000},
    GpuCounterRow{GpuCounter::throttle_thermal_ns, Counter::throttle_thermal_us, 1000},
};
static_assert(enum_cover::covers<GpuCounter, kGpuCounters>([](const GpuCounterRow& r) { return r.nvml; }),
              "kGpuCounters reads every GpuCounter in enum order");
static_assert(std::all_of(kGpuCounters.begin(), kGpuCounters.end(),
                          [](const GpuCounterRow& r) {
                            return kCounters[static_cast<std::size_t>(r.counter)].source == CounterSource::nvml;
                          }),
              "every GPU counter is one of kCounters' nvml rows");

const GpuCounterRow& gpu_counter_row(Counter c) {
  for (const auto& row : kGpuCounters)
    if (row.counter == c) return row;
  throw std::logic_error("not a GPU counter");
}

std::uint64_t saturated_at(int bits) { return bits >= 64 ? UINT64_MAX : (std::uint64_t{1} << bits) - 1; }

Fact<std::uint64_t> parse_counter_text(std::string_view text, const std::string& path) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return Fact<std::uint64_t>::unknown(fmt::format("{}: '{}' is not a count", path, text));
  return v;
}

// /proc/net/snmp: a "Tcp:" line of names, then a "Tcp:" line of values.
Fact<std::uint64_t> snmp_retrans(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string names, values;
  while (std::getline(in, names))
    if (names.rfind("Tcp:", 0) == 0 && std::getline(in, values)) break;
  if (values.rfind("Tcp:", 0) != 0) return Fact<std::uint64_t>::unknown(path + ": no Tcp lines");
  std::istringstream n(names), v(values);
  std::string name, value;
  while (n >> name && v >> value)
    if (name == "RetransSegs") return parse_counter_text(value, path);
  return Fact<std::uint64_t>::unknown(path + ": no RetransSegs column");
}

// aer_dev_*: "NAME count" lines; the TOTAL_ line holds the sum.
Fact<std::uint64_t> aer_total(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string name, value;
  while (in >> name >> value)
    if (name.rfind("TOTAL_", 0) == 0) return parse_counter_text(value, path);
  return Fact<std::uint64_t>::unknown(path + ": no TOTAL_ line");
}

Fact<std::uint64_t> read_counter_file(const Sysfs& sysfs, const CounterReading& r) {
  const auto text = sysfs.read(r.path);
  if (!text) return Fact<std::uint64_t>::unknown(text.why());
  switch (counter_row(r.counter).source) {
    case CounterSource::node_snmp:
      return snmp_retrans(*text, r.path);
    case CounterSource::pci_aer:
      return aer_total(*text, r.path);
    case CounterSource::ib_port:
    case CounterSource::ib_hw:
    case CounterSource::netdev:
      return parse_counter_text(*text, r.path);
    case CounterSource::nvml:
      break;  // not planned from sysfs: read_gpu_counters asks NVML
    case CounterSource::ethtool:
      break;  // not a count per file: read_pause_sum sums the driver's statistics
  }
  return Fact<std::uint64_t>::unknown("unknown counter source");
}

void plan_counter_files(CounterPlan& plan, CounterSource source, const std::string& folder, const std::string& device,
                        const char* kind, const Sysfs& sysfs) {
  for (const auto& row : kCounters) {
    if (row.source != source) continue;
    const std::string path = folder + "/" + std::string(row.file);
    // A driver that has no hw_counters (or not this one) does not count it:
    // not a gap to report on every row.
    if (source == CounterSource::ib_hw && !sysfs.exists(path)) continue;
    plan.readings.push_back({device, kind, row.counter, path, Fact<std::uint64_t>::unknown("not read")});
  }
}

// Pause frames come from the driver on the machine, and from the captured
// text of `ethtool -S IF` in a copied tree, whose interfaces no ioctl reaches.
bool reads_this_machine(const Sysfs& sysfs) { return sysfs.root() == "/"; }

std::string ethtool_text_file(const std::string& ifname) { return "ethtool/" + ifname; }

Fact<EthtoolStats> read_ethtool_text(const Sysfs& sysfs, const std::string& ifname) {
  const auto text = sysfs.read(ethtool_text_file(ifname));
  if (!text) return Fact<EthtoolStats>::unknown(text.why());
  return parse_ethtool_stats(*text, (sysfs.root() / ethtool_text_file(ifname)).string());
}

Fact<std::vector<std::string>> ethtool_names_of(const Sysfs& sysfs, const std::string& ifname) {
  if (reads_this_machine(sysfs)) return ethtool_stat_names(ifname);
  const auto stats = read_ethtool_text(sysfs, ifname);
  if (!stats) return Fact<std::vector<std::string>>::unknown(stats.why());
  return stats->names;
}

// The rx and tx pause sums of `ifname`, each where its driver lists a pause
// statistic: the names are listed once here, a read only fetches values.
void plan_pause_counters(CounterPlan& plan, const Sysfs& sysfs, const std::string& ifname) {
  // Pause frames are a physical link's: a virtual interface (bridge, veth,
  // bond) has none of its own, and an ioctl per container veth each row
  // would cost the leader for nothing.
  if (!sysfs.exists("sys/class/net/" + ifname + "/device")) return;
  const auto names = ethtool_names_of(sysfs, ifname);
  // A driver without ethtool statistics, or a tree without the file, has
  // nothing to count: not a gap to report on every row (as hw_counters).
  if (!names) return;
  const std::string path =
      reads_this_machine(sysfs) ? "SIOCETHTOOL ETHTOOL_GSTATS " + ifname : ethtool_text_file(ifname);
  for (const auto& [counter, direction] : {std::pair{Counter::rx_pause_frames, PauseDirection::rx},
                                           std::pair{Counter::tx_pause_frames, PauseDirection::tx}}) {
    auto indices = pause_stat_indices(*names, direction);
    if (indices.empty()) continue;
    CounterReading r{ifname, "interface", counter, path, Fact<std::uint64_t>::unknown("not read")};
    r.stat_indices = std::move(indices);
    r.stat_count = names->size();
    plan.readings.push_back(std::move(r));
  }
}

// One ETHTOOL_GSTATS (or parse of the file) per interface and snapshot,
// shared by its rx and tx sums.
using EthtoolValuesSeen = std::map<std::string, Fact<std::vector<std::uint64_t>>>;

Fact<std::vector<std::uint64_t>> ethtool_values_of(const Sysfs& sysfs, const CounterReading& r) {
  using Values = Fact<std::vector<std::uint64_t>>;
  if (reads_this_machine(sysfs)) return ethtool_stat_values(r.device, r.stat_count);
  const auto stats = read_ethtool_text(sysfs, r.device);
  if (!stats) return Values::unknown(stats.why());
  if (stats->values.size() != r.stat_count)
    return Values::unknown(fmt::format("{}: {} statistics, {} when the counters were planned: not comparable",
                                       (sysfs.root() / r.path).string(), stats->values.size(), r.stat_count));
  return stats->values;
}

Fact<std::uint64_t> read_pause_sum(const Sysfs& sysfs, const CounterReading& r, EthtoolValuesSeen& seen) {
  auto it = seen.find(r.device);
  if (it == seen.end()) it = seen.emplace(r.device, ethtool_values_of(sysfs, r)).first;
  if (!it->second) return Fact<std::uint64_t>::unknown(it->second.why());
  return sum_stats(*it->second, r.stat_indices, "ethtool statistics of " + r.device);
}

// The AER totals of the PCI function behind `device_link`, once per function;
// `kind` pci for a NIC's function, gpu for a GPU's (its NVML counters' device).
void plan_aer_files(CounterPlan& plan, const Sysfs& sysfs, const std::string& device_link, const char* kind,
                    std::set<std::string>& seen) {
  const auto real = sysfs.resolve(device_link);
  if (!real) return;  // a virtual interface has no PCI function
  const std::string bus = std::filesystem::path(*real).filename().string();
  if (!is_bus_id(bus) || !seen.insert(bus).second) return;
  plan_counter_files(plan, CounterSource::pci_aer, *real, bus, kind, sysfs);
}

std::string why_delta_unknown(const CounterReading& b, const CounterReading& a) {
  if (!b.value) return "unreadable before the row: " + b.value.why();
  if (!a.value) return "unreadable after the row: " + a.value.why();
  const auto& row = counter_row(a.counter);
  const std::uint64_t top = saturated_at(row.bits);
  if (row.bits < 64 && (*b.value >= top || *a.value >= top))
    return fmt::format(
        "saturated: the {}-bit counter stops at {} (read {} before, {} after); clear it (perfquery -x -R)", row.bits,
        top, *b.value, *a.value);
  if (*a.value < *b.value) return fmt::format("fell from {} to {}: reset or the driver reloaded", *b.value, *a.value);
  return "";
}

// The node's counters: sysfs's, then the GPUs' (empty without NVML), read
// in one order so that a snapshot lines up with the one before it.
class NodeRowCounters final : public RowCounters {
 public:
  NodeRowCounters(Sysfs sysfs, std::unique_ptr<Nvml> nvml)
      : sysfs_(std::move(sysfs)), nvml_(std::move(nvml)), plan_(plan_counters(sysfs_)) {
    if (nvml_) gpu_plan_ = plan_gpu_counters(*nvml_);
  }
  void before() override { before_ = read_all(); }
  std::vector<CounterMove> after() override { return counter_moves(before_, read_all()); }
  std::size_t size() const override { return plan_.readings.size() + gpu_plan_.readings.size(); }

 private:
  std::vector<CounterReading> read_all() {
    auto all = read_counters(sysfs_, plan_);
    if (!gpu_plan_.readings.empty()) {
      auto gpus = read_gpu_counters(*nvml_, gpu_plan_);
      all.insert(all.end(), std::make_move_iterator(gpus.begin()), std::make_move_iterator(gpus.end()));
    }
    return all;
  }
  Sysfs sysfs_;
  std::unique_ptr<Nvml> nvml_;
  CounterPlan plan_;
  CounterPlan gpu_plan_;
  std::vector<CounterReading> before_;
};

// The GPU's device name in the record: its bus id as the inventory spells
// it, or "gpu<index>" where NVML cannot say (the index is NVML's).
std::string gpu_device(Nvml& nvml, unsigned gpu) {
  const auto raw = nvml.pci_bus_id(gpu);
  const auto bus = raw ? sysfs_bus_id(*raw) : raw;
  return bus ? *bus : fmt::format("gpu{}", gpu);
}

}  // namespace

const CounterRow& counter_row(Counter c) { return kCounters[static_cast<std::size_t>(c)]; }

std::vector<CounterRow> counter_rows() { return {kCounters.begin(), kCounters.end()}; }

const CounterRow* find_counter(std::string_view name) {
  for (const auto& row : kCounters)
    if (row.name == name) return &row;
  return nullptr;
}

CounterPlan plan_counters(const Sysfs& sysfs) {
  CounterPlan plan;
  std::set<std::string> functions;
  for (const auto& dev : sysfs.list("sys/class/infiniband")) {
    const std::string base = "sys/class/infiniband/" + dev;
    for (const auto& port : sysfs.list(base + "/ports"))
      for (auto source : {CounterSource::ib_port, CounterSource::ib_hw})
        plan_counter_files(plan, source, base + "/ports/" + port, dev + ":" + port, "port", sysfs);
    plan_aer_files(plan, sysfs, base + "/device", "pci", functions);
  }
  for (const auto& ifname : sysfs.list("sys/class/net")) {
    if (ifname == "lo") continue;  // not a fabric: its drops are the host's own
    plan_counter_files(plan, CounterSource::netdev, "sys/class/net/" + ifname, ifname, "interface", sysfs);
    plan_pause_counters(plan, sysfs, ifname);
    plan_aer_files(plan, sysfs, "sys/class/net/" + ifname + "/device", "pci", functions);
  }
  // The GPUs' PCIe links: a GPU whose link corrects errors all day slows every copy and collective.
  for (const auto& bus : sysfs.list("sys/bus/pci/devices"))
    if (is_nvidia_gpu_function(sysfs, bus)) plan_aer_files(plan, sysfs, "sys/bus/pci/devices/" + bus, "gpu", functions);
  plan_counter_files(plan, CounterSource::node_snmp, "", "node", "node", sysfs);
  for (auto& r : plan.readings)
    if (!r.path.empty() && r.path.front() == '/') r.path.erase(0, 1);  // the node-wide file's empty folder
  return plan;
}

std::vector<CounterReading> read_counters(const Sysfs& sysfs, const CounterPlan& plan) {
  std::vector<CounterReading> out = plan.readings;
  EthtoolValuesSeen ethtool;
  for (auto& r : out)
    r.value = counter_row(r.counter).source == CounterSource::ethtool ? read_pause_sum(sysfs, r, ethtool)
                                                                      : read_counter_file(sysfs, r);
  return out;
}

std::vector<CounterMove> counter_moves(const std::vector<CounterReading>& before,
                                       const std::vector<CounterReading>& after) {
  std::vector<CounterMove> moves;
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const auto& b = before[i];
    const auto& a = after[i];
    if (!b.value && !a.value) continue;  // never known: nothing changed that a row could have caused
    CounterMove m{a.device, a.device_kind, std::string(counter_row(a.counter).name), std::nullopt, ""};
    m.unknown_reason = why_delta_unknown(b, a);
    if (m.unknown_reason.empty()) {
      if (*a.value == *b.value) continue;
      m.delta = *a.value - *b.value;
    }
    moves.push_back(std::move(m));
  }
  return moves;
}

// Every GPU NVML lists, not only those this node's ranks use: the engine
// does not know which GPU a rank's backend picked (mpi-host picks none),
// and an XID or NVLink error on a neighbour GPU during a row still says the
// node's fabric was unwell. A counter a GPU or driver does not have (NVML:
// not supported, or no such call) is planned all the same: it is unknown in
// both snapshots, and counter_moves leaves such a counter out of the record
// rather than write a line per row saying so.
CounterPlan plan_gpu_counters(Nvml& nvml) {
  CounterPlan plan;
  if (!nvml.unavailable_reason().empty()) return plan;
  const auto count = nvml.device_count();
  if (!count) return plan;
  for (unsigned gpu = 0; gpu < *count; ++gpu) {
    const std::string device = gpu_device(nvml, gpu);
    for (const auto& row : kGpuCounters) {
      const auto& counter = counter_row(row.counter);
      plan.readings.push_back(
          {device, "gpu", row.counter, std::string(counter.file), Fact<std::uint64_t>::unknown("not read"), gpu});
    }
  }
  return plan;
}

std::vector<CounterReading> read_gpu_counters(Nvml& nvml, const CounterPlan& plan) {
  std::vector<CounterReading> out = plan.readings;
  for (auto& r : out) {
    const auto& row = gpu_counter_row(r.counter);
    const auto v = nvml.gpu_counter(r.gpu, row.nvml);
    r.value = v ? Fact<std::uint64_t>(*v / row.nvml_units_per_unit) : v;
  }
  return out;
}

std::unique_ptr<RowCounters> make_row_counters(Sysfs sysfs, std::unique_ptr<Nvml> nvml) {
  return std::make_unique<NodeRowCounters>(std::move(sysfs), std::move(nvml));
}

}  // namespace fb::topo
