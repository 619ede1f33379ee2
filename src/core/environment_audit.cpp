// The environment audit (core/environment_audit.hpp): read each rank's
// recorded settings the way NCCL does (its files, then the environment on
// top), then judge them against the rank's own NICs and against each other.
#include "fabricbench/core/environment_audit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "fabricbench/core/enum_cover.hpp"

namespace fb {
// Named, not anonymous: a unity batch shares one translation unit.
namespace env_audit {

using json = nlohmann::ordered_json;
using Settings = std::map<std::string, std::string>;

struct FlagRow {
  EnvFlag flag;
  std::string_view name, reason, fix;
};

// NCCL's variables: docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html.
constexpr std::array kFlags{
    FlagRow{EnvFlag::algo_forced, "algo_forced",
            "NCCL's algorithm is forced: the figures measure that algorithm, not the one NCCL picks for this fabric "
            "and size",
            "unset NCCL_ALGO (environment, /etc/nccl.conf, ~/.nccl.conf or NCCL_CONF_FILE) for an acceptance run"},
    FlagRow{EnvFlag::proto_forced, "proto_forced",
            "NCCL's protocol is forced: sizes where NCCL would pick another protocol (LL, LL128, Simple) run slower",
            "unset NCCL_PROTO"},
    FlagRow{EnvFlag::channels_forced, "channels_forced",
            "NCCL's channel count is pinned: too few channels leave NIC and NVLink bandwidth unused, too many take SMs",
            "unset NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_MIN_CTAS and NCCL_MAX_CTAS"},
    FlagRow{
        EnvFlag::p2p_disabled, "p2p_disabled",
        "GPU peer-to-peer is off: NVLink and PCIe P2P go unused and GPUs of a node exchange data through host memory",
        "unset NCCL_P2P_DISABLE (and NCCL_P2P_LEVEL=LOC)"},
    FlagRow{EnvFlag::ib_disabled, "ib_disabled",
            "NCCL's InfiniBand/RoCE transport is off: traffic between nodes goes over TCP sockets, a fraction of the "
            "RDMA NICs' rate, and a faulty RDMA port is never exercised",
            "unset NCCL_IB_DISABLE"},
    FlagRow{EnvFlag::shm_disabled, "shm_disabled",
            "NCCL's shared-memory transport is off: GPUs of a node that cannot use P2P talk over the network instead",
            "unset NCCL_SHM_DISABLE"},
    FlagRow{EnvFlag::net_socket, "net_socket",
            "NCCL_NET=Socket forces TCP sockets between nodes even where RDMA NICs are up", "unset NCCL_NET"},
    FlagRow{EnvFlag::ib_hca_leaves_out, "ib_hca_leaves_out",
            "NCCL_IB_HCA leaves out RDMA ports the node has up: the run uses fewer NICs than the node has and a faulty "
            "port outside the list goes unmeasured",
            "list every port the node has up in NCCL_IB_HCA, or unset it"},
    FlagRow{EnvFlag::socket_ifname_slow, "socket_ifname_slow",
            "NCCL_SOCKET_IFNAME picks no interface as fast as the node's fastest: NCCL's socket traffic (and all of "
            "it without RDMA) takes the slower one",
            "name the node's fastest interface in NCCL_SOCKET_IFNAME"},
    FlagRow{EnvFlag::roce_no_gid_index, "roce_no_gid_index",
            "a RoCE port is up and NCCL_IB_GID_INDEX is not set: NCCL before 2.21 then takes GID index 0 (RoCE v1 or "
            "a link-local address), which RoCE v2 fabrics do not route",
            "set NCCL_IB_GID_INDEX to the port's RoCE v2 GID index (show_gids), or use NCCL 2.21 or later"},
    FlagRow{EnvFlag::differs_between_ranks, "differs_between_ranks",
            "ranks run with different settings: their figures do not measure the same thing, and NCCL ranks that "
            "disagree on an algorithm or transport can hang",
            "launch every rank with the same environment (mpirun -x, srun --export) and the same NCCL conf files"},
};
static_assert(enum_cover::covers<EnvFlag, kFlags>([](const FlagRow& r) { return r.flag; }),
              "kFlags describes every EnvFlag in enum order");

// When a variable's value raises a flag.
enum class When { set, nonzero, socket, level_loc };

struct VariableRow {
  std::string_view variable;
  EnvFlag flag;
  When when;
};

constexpr std::array kVariables{
    VariableRow{"NCCL_ALGO", EnvFlag::algo_forced, When::set},
    VariableRow{"NCCL_PROTO", EnvFlag::proto_forced, When::set},
    VariableRow{"NCCL_MIN_NCHANNELS", EnvFlag::channels_forced, When::set},
    VariableRow{"NCCL_MAX_NCHANNELS", EnvFlag::channels_forced, When::set},
    VariableRow{"NCCL_MIN_CTAS", EnvFlag::channels_forced, When::set},
    VariableRow{"NCCL_MAX_CTAS", EnvFlag::channels_forced, When::set},
    VariableRow{"NCCL_P2P_DISABLE", EnvFlag::p2p_disabled, When::nonzero},
    VariableRow{"NCCL_P2P_LEVEL", EnvFlag::p2p_disabled, When::level_loc},
    VariableRow{"NCCL_IB_DISABLE", EnvFlag::ib_disabled, When::nonzero},
    VariableRow{"NCCL_SHM_DISABLE", EnvFlag::shm_disabled, When::nonzero},
    VariableRow{"NCCL_NET", EnvFlag::net_socket, When::socket},
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool raises(When when, const std::string& value) {
  switch (when) {
    case When::set:
      return !value.empty();
    case When::nonzero:  // NCCL reads these as integers: "1" switches the transport off
      return !value.empty() && std::strtoll(value.c_str(), nullptr, 10) != 0;
    case When::socket:
      return lower(value) == "socket";
    case When::level_loc:  // LOC, or its old number 0: never P2P
      return lower(value) == "loc" || value == "0";
  }
  return false;
}

// The settings a rank runs with, as NCCL takes them: /etc/nccl.conf, then the
// user's file over it, then the environment over both.
Settings effective(const json& env) {
  Settings out;
  for (const auto& f : env.value("files", json::array()))
    if (f.is_object() && f.contains("settings") && f["settings"].is_object())
      for (const auto& [k, v] : f["settings"].items())
        if (v.is_string()) out[k] = v.get<std::string>();
  const json variables = env.value("variables", json::object());  // items() of a temporary would dangle
  for (const auto& [k, v] : variables.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

std::optional<std::string> get(const Settings& s, const std::string& name) {
  const auto it = s.find(name);
  if (it == s.end()) return std::nullopt;
  return it->second;
}

// NCCL's list syntax for NCCL_IB_HCA and NCCL_SOCKET_IFNAME: comma-separated
// prefixes, '^' first to exclude, '=' before an entry to match it exactly;
// an HCA entry may name a port ("mlx5_0:1").
struct NameList {
  bool exclude = false;
  struct Entry {
    std::string name;
    bool exact = false;
    std::string port;
  };
  std::vector<Entry> entries;
};

NameList parse_list(std::string text, bool ports) {
  NameList l;
  if (!text.empty() && text[0] == '^') {
    l.exclude = true;
    text.erase(0, 1);
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    NameList::Entry e;
    if (!item.empty() && item[0] == '=') {
      e.exact = true;
      item.erase(0, 1);
    }
    if (const auto colon = item.find(':'); ports && colon != std::string::npos) {
      e.port = item.substr(colon + 1);
      item.resize(colon);
    }
    e.name = item;
    if (!e.name.empty()) l.entries.push_back(e);
  }
  return l;
}

bool selects(const NameList& l, const std::string& name, const std::string& port) {
  bool hit = false;
  for (const auto& e : l.entries)
    hit = hit || ((e.exact ? name == e.name : name.starts_with(e.name)) && (e.port.empty() || e.port == port));
  return l.exclude ? !hit : hit;
}

// The line's NICs that are up, by kind.
std::vector<json> nics_up(const json& line, std::initializer_list<std::string_view> kinds) {
  std::vector<json> out;
  for (const auto& n : line.value("nics", json::array()))
    if (n.is_object() && n.value("up", false) &&
        std::find(kinds.begin(), kinds.end(), n.value("kind", std::string())) != kinds.end())
      out.push_back(n);
  return out;
}

std::string hca_left_out(const Settings& s, const json& line) {
  const auto hca = get(s, "NCCL_IB_HCA");
  if (!hca || hca->empty()) return {};
  const NameList list = parse_list(*hca, true);
  std::vector<std::string> left;
  for (const auto& n : nics_up(line, {"IB", "RoCE"})) {
    const std::string full = n.value("name", std::string());
    const auto colon = full.find(':');
    const std::string dev = full.substr(0, colon), port = colon == std::string::npos ? "" : full.substr(colon + 1);
    if (!selects(list, dev, port)) left.push_back(full);
  }
  return left.empty() ? "" : fmt::format("leaves out {}", fmt::join(left, ", "));
}

std::string slow_ifname(const Settings& s, const json& line) {
  const auto ifname = get(s, "NCCL_SOCKET_IFNAME");
  if (!ifname || ifname->empty()) return {};
  const NameList list = parse_list(*ifname, false);
  double fastest = 0, picked = 0;
  std::string fastest_name;
  for (const auto& n : nics_up(line, {"Ethernet"})) {
    const auto rate = n.find("rate_gbit");
    const std::string name = n.value("name", std::string());
    if (name == "lo" || rate == n.end() || !rate->is_number()) continue;  // unknown is not slow
    const double r = rate->get<double>();
    if (r > fastest) fastest = r, fastest_name = name;
    if (selects(list, name, "")) picked = std::max(picked, r);
  }
  if (fastest <= 0 || picked >= fastest) return {};
  return picked > 0 ? fmt::format("its interfaces reach {:g} Gb/s, {} has {:g} Gb/s", picked, fastest_name, fastest)
                    : fmt::format("it names no interface that is up with a known rate; {} has {:g} Gb/s", fastest_name,
                                  fastest);
}

std::string roce_without_gid(const Settings& s, const json& line) {
  if (get(s, "NCCL_IB_GID_INDEX")) return {};
  if (raises(When::nonzero, get(s, "NCCL_IB_DISABLE").value_or("")) ||
      raises(When::socket, get(s, "NCCL_NET").value_or("")))
    return {};  // NCCL does not use the port at all: flagged as such
  std::vector<std::string> roce;
  for (const auto& n : nics_up(line, {"RoCE"})) roce.push_back(n.value("name", std::string()));
  return roce.empty() ? "" : fmt::format("RoCE port{} up: {}", roce.size() == 1 ? "" : "s", fmt::join(roce, ", "));
}

struct Collector {
  std::map<std::tuple<EnvFlag, std::string, std::string>, EnvFinding> found;
  void add(EnvFlag flag, const std::string& setting, const std::string& detail, const InventoryLine& line) {
    auto& f = found[{flag, setting, detail}];
    f.flag = flag;
    f.setting = setting;
    f.detail = detail;
    f.ranks.push_back(line.rank);
    if (std::find(f.hosts.begin(), f.hosts.end(), line.host) == f.hosts.end()) f.hosts.push_back(line.host);
  }
};

void audit_rank(const InventoryLine& line, const Settings& s, Collector& c) {
  for (const auto& row : kVariables)
    if (const auto v = get(s, std::string(row.variable)); v && raises(row.when, *v))
      c.add(row.flag, fmt::format("{}={}", row.variable, *v), "", line);
  const json& j = line.line.get();
  if (auto d = hca_left_out(s, j); !d.empty())
    c.add(EnvFlag::ib_hca_leaves_out, "NCCL_IB_HCA=" + s.at("NCCL_IB_HCA"), d, line);
  if (auto d = slow_ifname(s, j); !d.empty())
    c.add(EnvFlag::socket_ifname_slow, "NCCL_SOCKET_IFNAME=" + s.at("NCCL_SOCKET_IFNAME"), d, line);
  if (auto d = roce_without_gid(s, j); !d.empty())
    c.add(EnvFlag::roce_no_gid_index, "NCCL_IB_GID_INDEX unset", d, line);
}

// One finding per variable whose value (or absence) is not the same on every rank.
void audit_differences(const std::vector<std::pair<const InventoryLine*, Settings>>& ranks,
                       std::vector<EnvFinding>& out) {
  std::map<std::string, bool> names;
  for (const auto& [line, s] : ranks)
    for (const auto& [k, v] : s) names[k] = true;
  for (const auto& [name, _] : names) {
    std::map<std::string, std::vector<int>> by_value;
    for (const auto& [line, s] : ranks) by_value[get(s, name).value_or("(unset)")].push_back(line->rank);
    if (by_value.size() < 2) continue;
    EnvFinding f{EnvFlag::differs_between_ranks, name, "", {}, {}};
    std::vector<std::string> parts;
    for (const auto& [value, who] : by_value) parts.push_back(fmt::format("{} on {}", value, ranks_text(who)));
    f.detail = fmt::format("{}", fmt::join(parts, "; "));
    for (const auto& [line, s] : ranks) {
      f.ranks.push_back(line->rank);
      if (std::find(f.hosts.begin(), f.hosts.end(), line->host) == f.hosts.end()) f.hosts.push_back(line->host);
    }
    out.push_back(std::move(f));
  }
}

const json* environment_of(const InventoryLine& line) {
  const json& j = line.line.get();
  if (!j.is_object()) return nullptr;
  const auto it = j.find("environment");
  return it != j.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace env_audit

std::string_view name(EnvFlag flag) { return env_audit::kFlags[static_cast<std::size_t>(flag)].name; }
std::string_view reason(EnvFlag flag) { return env_audit::kFlags[static_cast<std::size_t>(flag)].reason; }
std::string_view fix(EnvFlag flag) { return env_audit::kFlags[static_cast<std::size_t>(flag)].fix; }

std::vector<std::string_view> env_flag_names() {
  std::vector<std::string_view> out;
  for (const auto& r : env_audit::kFlags) out.push_back(r.name);
  return out;
}

bool is_env_flag(std::string_view text) {
  return std::any_of(env_audit::kFlags.begin(), env_audit::kFlags.end(),
                     [&](const env_audit::FlagRow& r) { return r.name == text; });
}

bool has_environment(const std::vector<InventoryLine>& inventory) {
  return std::any_of(inventory.begin(), inventory.end(),
                     [](const auto& l) { return env_audit::environment_of(l) != nullptr; });
}

std::vector<EnvFinding> audit_environment(const std::vector<InventoryLine>& inventory) {
  env_audit::Collector c;
  std::vector<std::pair<const InventoryLine*, env_audit::Settings>> ranks;
  for (const auto& line : inventory)
    if (const nlohmann::ordered_json* env = env_audit::environment_of(line)) {
      ranks.emplace_back(&line, env_audit::effective(*env));
      env_audit::audit_rank(line, ranks.back().second, c);
    }
  std::vector<EnvFinding> out;
  for (auto& [key, f] : c.found) out.push_back(std::move(f));
  env_audit::audit_differences(ranks, out);
  return out;
}

std::string ranks_text(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks[0]);
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    parts.push_back(j == i ? fmt::format("{}", r[i]) : fmt::format("{}-{}", r[i], r[j]));
    i = j + 1;
  }
  return fmt::format("ranks {}", fmt::join(parts, ", "));
}

std::string finding_text(const EnvFinding& f) {
  const std::string what = f.detail.empty() ? f.setting : fmt::format("{} ({})", f.setting, f.detail);
  return fmt::format("{} [{}] on {} ({}): {}; fix: {}", what, name(f.flag), ranks_text(f.ranks),
                     fmt::join(f.hosts, ", "), reason(f.flag), fix(f.flag));
}

}  // namespace fb
