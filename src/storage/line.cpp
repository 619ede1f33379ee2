#include "fabricbench/storage/line.hpp"

#include <algorithm>
#include <map>

#include "fabricbench/core/stats.hpp"

namespace fb::storage {

StorageLine make_line(const LineContext& c, Pattern pattern, const std::vector<RankResult>& results,
                      const std::vector<std::string>& node_hosts) {
  StorageLine l;
  l.run_id = c.run_id;
  l.target = c.target;
  l.path = c.path;
  l.fs_type = c.fs_type;
  l.fs_kind = c.fs_kind;
  l.mount_source = c.mount_source;
  l.mount_options = c.mount_options;
  l.shared = c.shared;
  l.pattern = std::string(name(pattern));
  l.mode = std::string(name(c.mode));
  const IoPolicy io = io_policy(pattern);
  l.io_engine = std::string(io.engine);
  l.queue_depth = io.queue_depth;
  l.sync = std::string(io.sync);
  l.fallocate = std::string(io.fallocate);
  l.block_bytes = c.block_bytes;
  l.file_bytes = c.file_bytes;
  l.files = c.files;
  l.ranks = static_cast<int>(results.size());
  l.o_direct = !results.empty();
  // Per node: its bytes over its slowest rank's time (its ranks started together).
  std::map<int, std::pair<std::uint64_t, double>> per_node;
  std::vector<double> op_us;
  bool cached = false;
  for (const auto& r : results) {
    const RankFigures& f = r.figures;
    l.bytes += f.bytes;
    l.ops += f.ops;
    l.elapsed_us = std::max(l.elapsed_us, f.elapsed_us);
    l.o_direct = l.o_direct && f.o_direct;
    cached = cached || f.cache == Cache::cached;
    if (l.note.empty() && !f.note.empty()) l.note = f.note;
    auto& n = per_node[r.node];
    n.first += f.bytes;
    n.second = std::max(n.second, f.elapsed_us);
    op_us.insert(op_us.end(), f.op_us.begin(), f.op_us.end());
  }
  // The weakest claim any rank can make: one rank's memory figure makes the
  // aggregate partly a memory figure.
  Cache cache = results.empty() ? Cache::dropped : results.front().figures.cache;
  if (cached) cache = Cache::cached;
  l.cache = std::string(name(cache));
  l.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, figures] : per_node) {
    l.hosts.push_back(node < static_cast<int>(node_hosts.size()) ? node_hosts[static_cast<std::size_t>(node)] : "?");
    l.node_gbps.push_back(figures.second > 0 ? static_cast<double>(figures.first) / figures.second * 1e-3 : 0.0);
  }
  l.node_min_gbps = l.node_gbps.empty() ? 0 : *std::min_element(l.node_gbps.begin(), l.node_gbps.end());
  if (l.elapsed_us > 0) {
    l.aggregate_gbps = static_cast<double>(l.bytes) / l.elapsed_us * 1e-3;  // bytes/us = MB/s
    l.iops = static_cast<double>(l.ops) / l.elapsed_us * 1e6;
  }
  const TimeStats s = summarize(op_us);
  l.latency_p50_us = s.median_us;
  l.latency_p99_us = s.p99_us;
  l.latency_max_us = s.max_us;
  return l;
}

}  // namespace fb::storage
