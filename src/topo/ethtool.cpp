// An interface's driver statistics through SIOCETHTOOL, or from the text of
// `ethtool -S` (topo/ethtool.hpp), and which of them count pause frames.
#include "fabricbench/topo/ethtool.hpp"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace fb::topo {
// A named namespace, not an anonymous one: the unity build puts every .cpp
// of fb_topo in one translation unit.
namespace ethtool_detail {

// The statistics that count pause frames, by the driver's name; `{}` stands
// for a priority 0-7 (IEEE 802.1Qbb's eight). Each frame is counted once:
// a driver's second view of the same frames is left out, as are durations
// and XOFF-to-XON transition counts.
//
// XON frames (PAUSE with quanta 0: "resume now") do not count where the
// driver counts them apart (Intel): they stop no traffic, and a peer that
// follows each XOFF with an XON would double the figure on those NICs only.
// mlx5 and bnxt count every pause frame whatever its quanta (IEEE 802.3's
// aPAUSEMACCtrlFramesReceived does), so there an XON is counted too.
struct PauseStatName {
  std::string_view pattern;
  PauseDirection direction;
};
constexpr std::array kPauseStatNames{
    // mlx5 (ConnectX-4 and later), the Linux kernel's mlx5 counters documentation,
    // https://docs.kernel.org/networking/device_drivers/ethernet/mellanox/mlx5/counters.html
    // rx/tx_pause_ctrl_phy: link-level pause frames on the physical port
    // (the 802.3 group's aPAUSEMACCtrlFramesReceived/Transmitted);
    // rx/tx_prio<p>_pause: PFC pause frames of priority p (listed only while
    // PFC is on for p). Not rx/tx_global_pause: with global pause on, the
    // per-priority group's count of the same link-level frames.
    PauseStatName{"rx_pause_ctrl_phy", PauseDirection::rx},
    PauseStatName{"tx_pause_ctrl_phy", PauseDirection::tx},
    PauseStatName{"rx_prio{}_pause", PauseDirection::rx},
    PauseStatName{"tx_prio{}_pause", PauseDirection::tx},
    // ice (E810), drivers/net/ethernet/intel/ice/ice_ethtool.c (ice_gstrings_pf_stats,
    // ice_get_strings), and Intel's "800 Series Linux Flow Control Configuration
    // Guide for RDMA Use Cases" (Priority Counters):
    // https://edc.intel.com/content/www/us/en/design/products/ethernet/800-series-linux-flow-control-configuration-guide-for-rdma-use-c/priority-flow-control-verification/
    PauseStatName{"link_xoff_rx.nic", PauseDirection::rx},
    PauseStatName{"link_xoff_tx.nic", PauseDirection::tx},
    PauseStatName{"rx_priority_{}_xoff.nic", PauseDirection::rx},
    PauseStatName{"tx_priority_{}_xoff.nic", PauseDirection::tx},
    // i40e (X710, XL710; ice before 2019 too), drivers/net/ethernet/intel/i40e/i40e_ethtool.c
    // (i40e_gstrings_stats, i40e_gstrings_pfc_stats). Not port.rx_priority_<p>_xon_2_xoff: transitions.
    PauseStatName{"port.link_xoff_rx", PauseDirection::rx},
    PauseStatName{"port.link_xoff_tx", PauseDirection::tx},
    PauseStatName{"port.rx_priority_{}_xoff_rx", PauseDirection::rx},
    PauseStatName{"port.tx_priority_{}_xoff_tx", PauseDirection::tx},
    // bnxt (NetXtreme-C/E), drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c
    // (bnxt_port_stats_arr): rx/tx_pause_frames are 802.3x, rx/tx_pfc_frames
    // every PFC frame. Not rx/tx_pfc_ena_frames_pri<p>: the same PFC frames
    // again, once per priority they pause.
    PauseStatName{"rx_pause_frames", PauseDirection::rx},
    PauseStatName{"tx_pause_frames", PauseDirection::tx},
    PauseStatName{"rx_pfc_frames", PauseDirection::rx},
    PauseStatName{"tx_pfc_frames", PauseDirection::tx},
};

// Whether `name` is `pattern` with its `{}`, if any, a priority 0-7.
bool matches_pause_pattern(std::string_view name, std::string_view pattern) {
  const auto hole = pattern.find("{}");
  if (hole == std::string_view::npos) return name == pattern;
  const std::string_view head = pattern.substr(0, hole), tail = pattern.substr(hole + 2);
  return name.size() == head.size() + 1 + tail.size() && name.starts_with(head) && name.ends_with(tail) &&
         name[hole] >= '0' && name[hole] <= '7';
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// One "name: value" line into `stats`, or why it is not one. The value is
// after the last colon: some drivers' names hold dots, none a colon.
std::string add_stat_line(std::string_view line, EthtoolStats& stats) {
  const auto colon = line.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return fmt::format("'{}' is not 'name: value'", line);
  const std::string_view name = trim_blanks(line.substr(0, colon));
  const std::string_view text = trim_blanks(line.substr(colon + 1));
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return fmt::format("{}: '{}' is not a count", name, text);
  stats.names.emplace_back(name);
  stats.values.push_back(value);
  return "";
}

std::string ethtool_failure(const std::string& ifname, int err) {
  return fmt::format("ethtool statistics of {}: {}", ifname, std::strerror(err));
}

std::string list_changed(const std::string& ifname, std::size_t planned, std::size_t now) {
  return fmt::format(
      "ethtool statistics of {}: the driver lists {} statistics, {} when the counters were planned (a PFC, "
      "channel or driver change): not comparable",
      ifname, now, planned);
}

// One SIOCETHTOOL request on `ifname`: 0, or the errno of the call that failed.
int ethtool_call(const std::string& ifname, void* request) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) return ENODEV;  // no interface has that name
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
  ifr.ifr_data = static_cast<char*>(request);
  int err = ::ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? errno : 0;
  if (::close(fd) < 0 && err == 0) err = errno;
  return err;
}

// The kernel fills as many names or values as the driver has at the time of
// the call, whatever count the request carries: room for more than the
// count just asked keeps a list that grew in between from writing past the
// buffer (the count that came back then says it changed).
std::size_t room_for(std::size_t count) { return 2 * count + 64; }

// How many statistics the driver lists now (ETHTOOL_GSSET_INFO).
Fact<std::size_t> stat_count(const std::string& ifname) {
  // The request is the header and one 32-bit count per set asked for.
  std::array<std::uint64_t, 3> buf{};
  static_assert(sizeof(buf) >= sizeof(ethtool_sset_info) + sizeof(std::uint32_t));
  ethtool_sset_info head{};
  head.cmd = ETHTOOL_GSSET_INFO;
  head.sset_mask = std::uint64_t{1} << ETH_SS_STATS;
  std::memcpy(buf.data(), &head, sizeof(head));
  if (const int err = ethtool_call(ifname, buf.data())) return Fact<std::size_t>::unknown(ethtool_failure(ifname, err));
  std::memcpy(&head, buf.data(), sizeof(head));
  // The kernel clears the bit of a set the driver does not have.
  if (!(head.sset_mask & (std::uint64_t{1} << ETH_SS_STATS))) return std::size_t{0};
  std::uint32_t count = 0;
  std::memcpy(&count, reinterpret_cast<const char*>(buf.data()) + sizeof(head), sizeof(count));
  return std::size_t{count};
}

}  // namespace ethtool_detail

Fact<EthtoolStats> parse_ethtool_stats(std::string_view text, const std::string& path) {
  EthtoolStats stats;
  bool header = false;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = ethtool_detail::trim_blanks(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    if (line.empty()) continue;
    std::string why;
    if (!header)
      why = line == "NIC statistics:" ? "" : fmt::format("'{}' where 'NIC statistics:' begins ethtool -S", line);
    else
      why = ethtool_detail::add_stat_line(line, stats);
    if (!why.empty()) return Fact<EthtoolStats>::unknown(fmt::format("{}: line {}: {}", path, line_no, why));
    header = true;
  }
  if (!header) return Fact<EthtoolStats>::unknown(path + ": empty, not the output of ethtool -S");
  return stats;
}

Fact<std::vector<std::string>> ethtool_stat_names(const std::string& ifname) {
  using Names = Fact<std::vector<std::string>>;
  const auto count = ethtool_detail::stat_count(ifname);
  if (!count) return Names::unknown(count.why());
  if (*count == 0) return std::vector<std::string>{};
  // The header (12 bytes) and ETH_GSTRING_LEN bytes per name, zero-padded.
  std::vector<char> buf(sizeof(ethtool_gstrings) + ethtool_detail::room_for(*count) * ETH_GSTRING_LEN);
  ethtool_gstrings head{};
  head.cmd = ETHTOOL_GSTRINGS;
  head.string_set = ETH_SS_STATS;
  head.len = static_cast<std::uint32_t>(*count);
  std::memcpy(buf.data(), &head, sizeof(head));
  if (const int err = ethtool_detail::ethtool_call(ifname, buf.data()))
    return Names::unknown(ethtool_detail::ethtool_failure(ifname, err));
  std::memcpy(&head, buf.data(), sizeof(head));
  if (head.len != *count) return Names::unknown(ethtool_detail::list_changed(ifname, *count, head.len));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < head.len; ++i) {
    const char* name = buf.data() + sizeof(head) + i * ETH_GSTRING_LEN;
    names.emplace_back(name, ::strnlen(name, ETH_GSTRING_LEN));  // a 32-byte name has no NUL
  }
  return names;
}

Fact<std::vector<std::uint64_t>> ethtool_stat_values(const std::string& ifname, std::size_t expected) {
  using Values = Fact<std::vector<std::uint64_t>>;
  // The count first: cheap, and it keeps a list that grew from overrunning the buffer.
  const auto count = ethtool_detail::stat_count(ifname);
  if (!count) return Values::unknown(count.why());
  if (*count != expected) return Values::unknown(ethtool_detail::list_changed(ifname, expected, *count));
  // The header is one 64-bit word (cmd, n_stats), then one word per value.
  static_assert(sizeof(ethtool_stats) == sizeof(std::uint64_t));
  std::vector<std::uint64_t> buf(1 + ethtool_detail::room_for(expected));
  ethtool_stats head{};
  head.cmd = ETHTOOL_GSTATS;
  head.n_stats = static_cast<std::uint32_t>(expected);
  std::memcpy(buf.data(), &head, sizeof(head));
  if (const int err = ethtool_detail::ethtool_call(ifname, buf.data()))
    return Values::unknown(ethtool_detail::ethtool_failure(ifname, err));
  std::memcpy(&head, buf.data(), sizeof(head));
  if (head.n_stats != expected) return Values::unknown(ethtool_detail::list_changed(ifname, expected, head.n_stats));
  return std::vector<std::uint64_t>(buf.begin() + 1, buf.begin() + 1 + static_cast<std::ptrdiff_t>(expected));
}

std::vector<std::size_t> pause_stat_indices(const std::vector<std::string>& names, PauseDirection direction) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < names.size(); ++i)
    for (const auto& stat : ethtool_detail::kPauseStatNames)
      if (stat.direction == direction && ethtool_detail::matches_pause_pattern(names[i], stat.pattern)) {
        out.push_back(i);
        break;
      }
  return out;
}

Fact<std::uint64_t> sum_stats(const std::vector<std::uint64_t>& values, const std::vector<std::size_t>& indices,
                              const std::string& what) {
  std::uint64_t sum = 0;
  for (const auto i : indices) {
    if (i >= values.size())
      return Fact<std::uint64_t>::unknown(fmt::format("{}: statistic {} of {} listed", what, i + 1, values.size()));
    if (__builtin_add_overflow(sum, values[i], &sum))
      return Fact<std::uint64_t>::unknown(what + ": the pause statistics' sum passes 2^64");
  }
  return sum;
}

}  // namespace fb::topo
