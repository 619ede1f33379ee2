#include "fabricbench/core/plan.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fabricbench/core/timing_groups.hpp"

namespace fb {

JsonValue to_json(const RunOptions& o) {
  std::vector<std::string> ops;
  for (Op op : o.ops) ops.emplace_back(name(op));
  std::vector<std::string> scopes;
  for (Scope s : o.scopes) scopes.emplace_back(name(s));
  return nlohmann::ordered_json{{"minbytes", o.grid.min_bytes},
                                {"maxbytes", o.grid.max_bytes},
                                {"stepfactor", o.grid.step_factor},
                                {"stepbytes", o.grid.step_bytes},
                                {"ops", ops},
                                {"datatype", name(o.dtype)},
                                {"redop", name(o.redop)},
                                {"root", o.root},
                                {"backend", o.backend},
                                {"scopes", scopes},
                                {"iters", o.iters},
                                {"cap_min_iters", o.cap_min_iters},
                                {"cap_bytes_per_rank", kMaxBytesPerSize},
                                {"timing_group_span_us", kMinGroupSpanUs},
                                {"warmup_iters", o.warmup},
                                {"time_budget_s", o.time_budget_s},
                                {"median_ci", o.median_ci},
                                {"check", o.check},
                                {"out_of_place", o.out_of_place},
                                {"in_place", o.in_place},
                                {"in_place_where_out_refused", o.in_place_where_out_refused},
                                {"peers", {o.peer_a, o.peer_b}},
                                {"window", o.window},
                                {"per_rank_times", o.per_rank_times},
                                {"device", o.device},
                                {"graph", o.graph},
                                {"check_every", o.check_every},
                                {"duration_s", o.duration_s},
                                {"timeout_s", o.timeout_s},
                                {"inject", o.inject}};
}

bool set_placement(std::string_view word, RunOptions& o) {
  if (word != "one" && word != "both" && word != "out" && word != "in") return false;
  o.out_of_place = word != "in";
  o.in_place = word == "both" || word == "in";
  o.in_place_where_out_refused = word == "one";
  return true;
}

}  // namespace fb
