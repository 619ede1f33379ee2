// What in the ranks' recorded environment (the inventory lines' `environment`,
// topo/environment.hpp) distorts a benchmark or hides a fault: NCCL's choice
// taken away (algorithm, protocol, channels), a transport switched off, a NIC
// list that leaves NICs out, a socket interface slower than the node's
// fastest, RoCE without a GID index, and settings that differ between ranks.
// One reading for every reader: run's warning, check's `environment` rule and
// the HTML report (docs/acceptance.md, "environment").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/record_lines.hpp"

namespace fb {

enum class EnvFlag {
  algo_forced,
  proto_forced,
  channels_forced,
  p2p_disabled,
  ib_disabled,
  shm_disabled,
  net_socket,
  ib_hca_leaves_out,
  socket_ifname_slow,
  roce_no_gid_index,
  differs_between_ranks,
};

// The flag's name in profiles and JSON ("algo_forced"), its reason and its fix.
std::string_view name(EnvFlag flag);
std::string_view reason(EnvFlag flag);
std::string_view fix(EnvFlag flag);
// Every flag's name, for "allowed:" messages.
std::vector<std::string_view> env_flag_names();
bool is_env_flag(std::string_view text);

struct EnvFinding {
  EnvFlag flag = EnvFlag::algo_forced;
  std::string setting;  // "NCCL_ALGO=Ring", or for differs_between_ranks the variable and each value's ranks
  std::string detail;   // what the inventory adds ("leaves out mlx5_1:1"), "" when nothing
  std::vector<int> ranks;
  std::vector<std::string> hosts;
};

// Findings over every rank's inventory line, one per flag and setting with
// the ranks that have it. Lines without `environment` (records before schema
// 1.9, a failed inventory) are passed over.
std::vector<EnvFinding> audit_environment(const std::vector<InventoryLine>& inventory);
// Whether any line recorded its environment (a reader may judge the audit).
bool has_environment(const std::vector<InventoryLine>& inventory);

// "NCCL_ALGO=Ring on rank 1 (host a): <reason>; fix: <fix>"
std::string finding_text(const EnvFinding& finding);
// "ranks 0-1" / "rank 1" / "ranks 0, 2"
std::string ranks_text(const std::vector<int>& ranks);

}  // namespace fb
