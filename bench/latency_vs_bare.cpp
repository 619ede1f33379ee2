// Small-message latency: `fabricbench run`'s engine with the shipped mpi
// backend (and the hang watchdog running, as the command has it by default)
// against a bare MPI loop of the same calls, in the same job, same ranks,
// same cores, alternating order each round.
//
// The bare loops (bare_loop.hpp) give the suites' figure (`loop`: the timed
// loop's mean, no clock read inside) and fabricbench's (`median`: the median
// of per-iteration slowest-rank times). The ratio is fabricbench's median over
// the bare median, paired per round (the median of the per-round ratios), and
// also over the bare loop mean.
//   mpirun -np 2 --bind-to none build/bench/fb_latency_bench [rounds] [iters]
// FB_LATENCY_CASES="pingpong:8,sendrecv:1024" picks the cases (unidir:4194304
// holds the engine's window against osu_bw's shape: use few iterations).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/watchdog.hpp"
#include "bare_loop.hpp"
#include "mpi_host/mpi_host.hpp"

namespace {

struct Case {
  fb::Op op;
  std::uint64_t bytes;
};

// The bare loop in this process, on its own buffers (as the suites have them).
bare::Figures bare_figures(const Case& c, int iters, int warmup) {
  bare::Loop loop{};
  bare::parse(fb::name(c.op), loop);
  bare::Runner runner(loop, c.bytes);
  return runner.measure(iters, warmup);
}

class LastRow final : public fb::RowSink {
 public:
  void begin(const fb::RunHeader&) override {}
  void measurement(const fb::Measurement& row) override { time = row.time; }
  void skip(const fb::Skip&) override {}
  void end(const fb::Summary&) override {}
  fb::TimeStats time;
};

bare::Figures engine(fb::Backend& backend, const fb::NodeMap& nodes, const Case& c, int iters, int warmup,
               fb::ProgressBoard& board) {
  fb::RunOptions o;
  o.ops = {c.op};
  o.grid = {c.bytes, c.bytes, 2.0, 0};
  o.iters = iters;
  o.warmup = warmup;
  o.in_place = false;
  LastRow row;
  fb::Runner runner(fb::Comm::world(), nodes, backend, o, &row);
  runner.watch(&board);
  runner.run();
  double v[2] = {row.time.mean_us, row.time.median_us};
  MPI_Bcast(v, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return {v[0], v[1]};
}

std::vector<Case> cases_from_env() {
  std::vector<Case> out;
  const char* text = std::getenv("FB_LATENCY_CASES");
  std::string s = text ? text : "pingpong:8,pingpong:1024,sendrecv:8,sendrecv:1024,all_reduce:8";
  std::size_t at = 0;
  while (at < s.size()) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    const std::string item = s.substr(at, comma - at);
    const std::size_t colon = item.find(':');
    const auto op = fb::parse_op(item.substr(0, colon));
    if (!op || colon == std::string::npos) {
      std::fprintf(stderr, "FB_LATENCY_CASES '%s': give op:bytes,... (pingpong, sendrecv, all_reduce)\n", item.c_str());
      std::exit(2);
    }
    out.push_back({*op, std::strtoull(item.c_str() + colon + 1, nullptr, 10)});
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fb::MpiSession mpi(&argc, &argv);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 2000;
  // 200 warm-ups for the small messages this bench is about; two from 1 MiB
  // (a 64-message unidir window of 4 MiB moves 256 MiB per iteration).
  const auto warmup_for = [](const Case& c) { return c.bytes >= (std::uint64_t{1} << 20) ? 2 : 200; };
  const fb::Comm world = fb::Comm::world();
  const fb::NodeMap nodes = fb::map_nodes(world);
  auto backend = fb::make_mpi_host_backend();
  fb::ProgressBoard board;
  fb::Watchdog watchdog(world, nodes, fb::watch::TimeoutPolicy{}, board, nullptr);
  const bool root = world.rank() == 0;
  if (root)
    std::printf("# %d ranks, %d rounds of %d iterations (-w 200, 2 from 1 MiB), medians over rounds; times per "
                "message, us\n",
                world.size(), rounds, iters);
  for (const Case& c : cases_from_env()) {
    const int warmup = warmup_for(c);
    std::vector<double> bare_loop, bare_median, fb_mean, fb_median, ratio, ratio_loop;
    for (int r = 0; r < rounds; ++r) {
      bare::Figures b{}, e{};
      if (r % 2 == 0) {
        b = bare_figures(c, iters, warmup);
        e = engine(*backend, nodes, c, iters, warmup, board);
      } else {
        e = engine(*backend, nodes, c, iters, warmup, board);
        b = bare_figures(c, iters, warmup);
      }
      bare_loop.push_back(b.loop_us);
      bare_median.push_back(b.median_us);
      fb_mean.push_back(e.loop_us);
      fb_median.push_back(e.median_us);
      ratio.push_back(e.median_us / b.median_us);
      ratio_loop.push_back(e.median_us / b.loop_us);
      if (root && std::getenv("FB_LATENCY_ROUNDS"))
        std::printf("    round %d: bare loop %.3f median %.3f, fabricbench median %.3f\n", r, b.loop_us, b.median_us,
                    e.median_us);
    }
    if (root)
      std::printf("%zu B %s: bare loop %.3f us, bare median %.3f us, fabricbench median %.3f us (mean %.3f), "
                  "ratio %.3f (over the bare loop: %.3f)\n",
                  static_cast<std::size_t>(c.bytes), std::string(fb::name(c.op)).c_str(), fb::median_of(bare_loop),
                  fb::median_of(bare_median), fb::median_of(fb_median), fb::median_of(fb_mean), fb::median_of(ratio),
                  fb::median_of(ratio_loop));
  }
  watchdog.finish();
  return 0;
}
