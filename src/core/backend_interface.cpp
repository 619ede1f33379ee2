#include "fabricbench/core/backend.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/timing_groups.hpp"

namespace fb {

namespace {

// How many iterations one timing spans here (timing_groups.hpp), at least 1.
std::size_t host_group(const IterationTimes& times) {
  const std::size_t wanted = times.in_step ? 1 : timing_group_size(times.agreed_us, kMaxHostGroup);
  return std::max<std::size_t>(std::min(wanted, times.start_us.size()), 1);
}

// Walks `times` in groups of host_group(times) iterations (timing_groups.hpp:
// ranks' back-to-back iterations are not in step): `time_group(first, last)`
// gives a group's start and its summed time, and each of its iterations gets
// the group's mean, started one mean after the one before.
template <class TimeGroup>
void time_in_groups(IterationTimes& times, TimeGroup time_group) {
  const std::size_t n = times.start_us.size();
  const std::size_t group = host_group(times);
  if (times.iterations_per_timing) *times.iterations_per_timing = group;
  for (std::size_t first = 0; first < n; first += group) {
    const std::size_t last = std::min(n, first + group);
    const auto [begin_us, total_us] = time_group(first, last);
    const double each_us = total_us / static_cast<double>(last - first);
    for (std::size_t i = first; i < last; ++i) {
      times.start_us[i] = begin_us + each_us * static_cast<double>(i - first);
      times.duration_us[i] = each_us;
    }
  }
}

}  // namespace

void PreparedOp::run_timed(IterationTimes times) {
  // One clock read per group: a group starts where the previous one ended.
  double t = now_us();
  time_in_groups(times, [&](std::size_t first, std::size_t last) {
    const double begin_us = t;
    for (std::size_t i = first; i < last; ++i) {
      count_issued(times.issued);
      run();
    }
    t = now_us();
    return std::pair{begin_us, t - begin_us};
  });
}

void average_in_groups(IterationTimes times) {
  time_in_groups(times, [&](std::size_t first, std::size_t last) {
    double sum_us = 0;
    for (std::size_t i = first; i < last; ++i) sum_us += times.duration_us[i];
    return std::pair{times.start_us[first], sum_us};
  });
}

int pair_peer(const OpSpec& spec, int rank) {
  if (rank == spec.peer_a) return spec.peer_b;
  return rank == spec.peer_b ? spec.peer_a : -1;
}

Support backend_runs(const Backend& backend, Op op) {
  if (backend.ops().has(op)) return Support::yes();
  const std::string_view elsewhere = backend.elsewhere();
  return Support::no(fmt::format("{} is not an op of the {} backend (it runs {}){}{}", name(op), backend.name(),
                                 backend.ops().names(), elsewhere.empty() ? "" : "; ", elsewhere));
}

Support support_for(const Backend& backend, const OpSpec& spec) {
  const Support runs = backend_runs(backend, spec.op);
  return runs.ok ? backend.supports(spec) : runs;
}

double ops_per_iteration(const OpSpec& spec) {
  if (spec.op == Op::pingpong) return 2.0;
  if (spec.op == Op::unidir || spec.op == Op::bidir) return spec.window;
  return 1.0;
}

CheckContext check_context(const OpSpec& spec, int rank, int nranks) {
  const OpDesc& d = op_desc(spec.op);
  CheckContext c;
  c.rule = d.check();
  c.dtype = spec.dtype;
  c.redop = spec.redop;
  c.rank = rank;
  c.nranks = nranks;
  c.root = spec.root;
  c.layout = spec.layout;
  c.max_value = check_value_limit(spec.dtype, spec.op, spec.redop, nranks);
  const int peer = pair_peer(spec, rank);
  if (d.pair && !d.copy && peer >= 0) {
    // unidir moves a -> b only; pingpong and bidir deliver to both.
    c.source = (spec.op == Op::unidir && rank == spec.peer_a) ? -1 : peer;
  }
  return c;
}

Support BackendGroup::allocate(const OpSpec&) { return Support::yes(); }

void set_up_backend(const Comm& world, Backend& backend, const RunOptions& options) {
  const Support setup = backend.setup(world, options);
  const std::string refusal = agree_on_error(world, setup.ok ? "" : setup.why);
  if (!refusal.empty()) throw UsageError(refusal);
  if (world.rank() == 0)
    for (const auto& note : backend.notes()) spdlog::warn("backend {}: {}", backend.name(), note);
}

Support Backend::setup(const Comm&, const RunOptions& options) {
  if (options.graph)
    return Support::no(fmt::format("--graph: the {} backend launches no GPU work to capture; CUDA graphs apply to "
                                   "the nccl and cuda backends",
                                   name()));
  if (options.device >= 0)
    return Support::no(fmt::format("--device: the {} backend uses no GPU; it applies to the nccl, cuda and mpi-cuda "
                                   "backends",
                                   name()));
  return Support::yes();
}

}  // namespace fb
