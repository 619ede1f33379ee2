#include "fabricbench/core/plan.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace fb {

std::string canonical(const RunOptions& o) {
  std::string ops;
  for (Op op : o.ops) ops += fmt::format("{},", name(op));
  std::string scopes;
  for (Scope s : o.scopes) scopes += fmt::format("{},", name(s));
  std::string inject;
  for (const auto& f : o.inject) inject += f + ";";
  return fmt::format("b={} e={} f={} i={} ops={} d={} o={} r={} backend={} scopes={} n={} w={} budget={} c={} "
                     "oop={} ip={} peers={},{} window={} per_rank={} device={} graph={} call={} duration={} timeout={} "
                     "inject={}",
                     o.grid.min_bytes, o.grid.max_bytes, o.grid.step_factor, o.grid.step_bytes, ops, name(o.dtype),
                     name(o.redop), o.root, o.backend, scopes, o.iters, o.warmup, o.time_budget_s, o.check,
                     o.out_of_place, o.in_place, o.peer_a, o.peer_b, o.window, o.per_rank_times, o.device, o.graph,
                     o.check_every, o.duration_s, o.timeout_s, inject);
}

nlohmann::ordered_json to_json(const RunOptions& o) {
  std::vector<std::string> ops;
  for (Op op : o.ops) ops.emplace_back(name(op));
  std::vector<std::string> scopes;
  for (Scope s : o.scopes) scopes.emplace_back(name(s));
  return {{"minbytes", o.grid.min_bytes}, {"maxbytes", o.grid.max_bytes},  {"stepfactor", o.grid.step_factor},
          {"stepbytes", o.grid.step_bytes}, {"ops", ops},                  {"datatype", name(o.dtype)},
          {"redop", name(o.redop)},         {"root", o.root},              {"backend", o.backend},
          {"scopes", scopes},               {"iters", o.iters},            {"warmup_iters", o.warmup},
          {"time_budget_s", o.time_budget_s}, {"check", o.check},        {"out_of_place", o.out_of_place},
          {"in_place", o.in_place},         {"peers", {o.peer_a, o.peer_b}}, {"window", o.window},
          {"per_rank_times", o.per_rank_times}, {"device", o.device}, {"graph", o.graph},
          {"check_every", o.check_every},   {"duration_s", o.duration_s},  {"timeout_s", o.timeout_s},
          {"inject", o.inject}};
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace fb
