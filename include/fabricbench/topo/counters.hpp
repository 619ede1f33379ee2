// Error counters of a node's fabric, read from sysfs and procfs under a root
// ("/" on a machine, a copied tree in tests): InfiniBand and RoCE ports,
// Ethernet interfaces (and their pause frames, through ethtool: see
// topo/ethtool.hpp), TCP retransmissions (node-wide) and the PCIe AER
// totals of each NIC's PCI function; and each GPU's NVLink, ECC, XID and
// throttle counters through NVML (topo/nvml.hpp). A snapshot is taken around
// each measured row (core/row_counters.hpp); a counter that cannot be read
// is unknown with the reason, never 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/row_counters.hpp"
#include "fabricbench/topo/nvml.hpp"
#include "fabricbench/topo/sysfs.hpp"

namespace fb::topo {

enum class Counter {
  // InfiniBand PortCounters (ports/<p>/counters/)
  symbol_error,
  link_error_recovery,
  link_downed,
  port_rcv_errors,
  port_rcv_remote_physical_errors,
  port_xmit_discards,
  local_link_integrity_errors,
  excessive_buffer_overrun_errors,
  // the driver's hardware counters (ports/<p>/hw_counters/), where present
  out_of_sequence,
  packet_seq_err,
  local_ack_timeout_err,
  roce_adp_retrans,
  np_cnp_sent,
  rp_cnp_handled,
  // AWS EFA's hardware counters (ports/<p>/hw_counters/, the Linux efa
  // driver's port statistics; the SRD network ones on Nitro v4 and later)
  rx_drops,
  rdma_read_wr_err,
  rdma_write_wr_err,
  retrans_pkts,
  retrans_timeout_events,
  unresponsive_remote_events,
  impaired_remote_conn_events,
  // Ethernet interfaces (net/<if>/statistics/, net/<if>/)
  rx_errors,
  tx_errors,
  rx_crc_errors,
  rx_dropped,
  tx_dropped,
  carrier_changes,
  // pause frames (IEEE 802.3x and PFC) of an interface with a device: the
  // driver's ethtool statistics, summed (topo/ethtool.hpp)
  rx_pause_frames,
  tx_pause_frames,
  // node-wide
  tcp_retrans_segs,
  // PCIe AER of each NIC's and GPU's PCI function (aer_dev_*, the TOTAL_ line)
  aer_correctable,
  aer_nonfatal,
  aer_fatal,
  // each GPU, through NVML (its bus id the device)
  nvlink_crc_errors,
  nvlink_replay_errors,
  nvlink_recovery_errors,
  ecc_corrected,
  ecc_uncorrected,
  xid_events,
  throttle_power_us,
  throttle_thermal_us,
};

// Where a counter lives, relative to its device's folder.
// nvml: not a file but an NVML call (`file` names it), one per GPU.
// ethtool: the SIOCETHTOOL ioctl on a machine, the file ethtool/<interface>
// (the text of `ethtool -S`) under a copied tree's root.
enum class CounterSource { ib_port, ib_hw, netdev, ethtool, node_snmp, pci_aer, nvml };

struct CounterRow {
  Counter counter;
  std::string_view name;  // the record's spelling
  CounterSource source;
  std::string_view file;  // relative to the device's folder; for nvml, the NVML call
  // Bits of the hardware counter: it stops at 2^bits - 1 (InfiniBand's
  // PortCounters saturate, they do not wrap). 64: wide enough never to stop.
  int bits;
};

const CounterRow& counter_row(Counter c);
// Every row, in enum order.
std::vector<CounterRow> counter_rows();
// The counter of that name, or nullptr.
const CounterRow* find_counter(std::string_view name);

// One counter of one device as read at one moment.
struct CounterReading {
  std::string device;       // see CounterMove
  std::string device_kind;  // port, interface, pci, node, gpu
  Counter counter;
  std::string path;  // relative to the root; for a GPU, the NVML call; for ethtool on "/", the ioctl
  Fact<std::uint64_t> value;
  unsigned gpu = 0;  // a GPU's NVML index
  // ethtool: the positions of the summed statistics in the driver's list,
  // and that list's length, as planned (a read compares the length).
  std::vector<std::size_t> stat_indices{};
  std::size_t stat_count = 0;
};

// The counters a node has: found once (folders listed), then read each time.
struct CounterPlan {
  std::vector<CounterReading> readings;  // values not read yet
};
CounterPlan plan_counters(const Sysfs& sysfs);
// Reads every planned file now.
std::vector<CounterReading> read_counters(const Sysfs& sysfs, const CounterPlan& plan);
// The moves between two snapshots of one plan: a counter that went up, one
// whose delta is unknown (either read saturated, the value fell: a reset or
// a driver reload, or a read failed in one of the two).
std::vector<CounterMove> counter_moves(const std::vector<CounterReading>& before,
                                       const std::vector<CounterReading>& after);

// Every GPU counter of every GPU NVML lists (none where NVML is absent).
// The device is the GPU's bus id as the inventory spells it ("0000:1a:00.0").
CounterPlan plan_gpu_counters(Nvml& nvml);
// Asks NVML for every planned counter now, in the record's units.
std::vector<CounterReading> read_gpu_counters(Nvml& nvml, const CounterPlan& plan);

// The engine's reader (core/row_counters.hpp) over `sysfs`, and over the
// GPUs of `nvml` where it is given.
std::unique_ptr<RowCounters> make_row_counters(Sysfs sysfs, std::unique_ptr<Nvml> nvml = nullptr);

}  // namespace fb::topo
