#include "placement_rules.hpp"

#include <fmt/format.h>

#include <sstream>

namespace fb::gpu {

DeviceChoice choose_device(int device_option, int local_rank, int device_count, const std::string& host) {
  DeviceChoice c;
  if (device_count <= 0) {
    c.error = fmt::format("no CUDA device visible to this rank on host {}", host);
    return c;
  }
  if (device_option >= 0) {
    if (device_option >= device_count)
      c.error = fmt::format("--device {}: host {} has {} CUDA device(s), 0 to {}", device_option, host, device_count,
                            device_count - 1);
    else
      c.device = device_option;
    return c;
  }
  c.device = local_rank % device_count;
  return c;
}

std::string shared_gpu_error(const std::vector<PlacedRank>& node, std::size_t me, int device, int device_count,
                             const std::string& host) {
  if (me >= node.size() || node[me].bus_id.empty()) return {};
  for (std::size_t r = 0; r < me; ++r) {
    if (node[r].bus_id != node[me].bus_id) continue;
    return fmt::format("ranks {} and {} are both on CUDA device {} ({}) of host {}: NCCL and the copy paths need one "
                       "rank per GPU; host {} runs {} ranks and this rank sees {} CUDA device(s): launch at most one "
                       "rank per GPU",
                       node[r].world_rank, node[me].world_rank, device, node[me].bus_id, host, host, node.size(),
                       device_count);
  }
  return {};
}

std::string peer_copy_refusal(const RankGpu& a, const RankGpu& b, int rank_a, int rank_b, std::string_view op) {
  if (a.host != b.host)
    return fmt::format("{} copies between GPUs of one node; ranks {} and {} are on hosts {} and {}", op, rank_a, rank_b,
                       a.host, b.host);
  if (a.bus_id.empty() || b.bus_id.empty())
    return fmt::format("{}: rank {} or {} has no GPU bus id to tell its GPU by", op, rank_a, rank_b);
  if (a.bus_id == b.bus_id)
    return fmt::format("ranks {} and {} share the GPU at {}: a peer copy needs two GPUs", rank_a, rank_b, a.bus_id);
  return {};
}

std::string encode(const Capability& c) { return fmt::format("{} {} {} {}", c.major, c.minor, c.rank, c.host); }

Capability lowest_capability(const std::vector<std::string>& encoded) {
  Capability lowest;
  for (const auto& text : encoded) {
    std::istringstream in(text);
    Capability c;
    in >> c.major >> c.minor >> c.rank >> c.host;
    if (c.major <= 0) continue;
    if (lowest.major == 0 || c.major < lowest.major || (c.major == lowest.major && c.minor < lowest.minor)) lowest = c;
  }
  return lowest;
}

Support fp8_reduction_support(const Capability& lowest) {
  if (lowest.major == 0 || lowest.major >= 9) return Support::yes();
  return Support::no(fmt::format("NCCL reduces fp8 on compute capability 9.0 and later; rank {} (host {}) has a {}.{} "
                                 "GPU",
                                 lowest.rank, lowest.host, lowest.major, lowest.minor));
}

}  // namespace fb::gpu
