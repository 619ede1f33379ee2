// `sweeps:` and `p2p:` entries of a profile -> RunOptions for the engine.
#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/sizes.hpp"
#include "profile_parts.hpp"

namespace fb::accept {
namespace {

template <typename T, typename Parse>
T named(const Field& f, const std::string& text, Parse parse, const std::string& allowed) {
  const auto v = parse(text);
  if (!v) f.fail(fmt::format("'{}' is unknown; allowed: {}", text, allowed));
  return *v;
}

std::vector<Op> parse_ops(const Field& f, bool p2p) {
  std::vector<Op> ops;
  for (const auto& text : f.list()) {
    const Op op = named<Op>(f, text, parse_op, allowed_ops());
    if (is_pair_op(op) != p2p)
      f.fail(p2p ? fmt::format("'{}' is a collective: list it under sweeps, not p2p", text)
                 : fmt::format("'{}' is a point-to-point op: list it under p2p, not sweeps", text));
    ops.push_back(op);
  }
  return ops;
}

std::vector<Scope> parse_scopes(const Field& f) {
  std::vector<Scope> scopes;
  for (const auto& text : f.list()) {
    if (text == "all") return {all_scopes().begin(), all_scopes().end()};
    scopes.push_back(named<Scope>(f, text, parse_scope, allowed_scopes()));
  }
  return scopes;
}

void parse_grid(const Field& f, SizeGrid& grid) {
  if (auto v = f.find("minbytes")) grid.min_bytes = v->bytes();
  if (auto v = f.find("maxbytes")) grid.max_bytes = v->bytes();
  if (auto v = f.find("stepfactor")) grid.step_factor = v->number(1.0, 1e6);
  if (auto v = f.find("stepbytes")) grid.step_bytes = v->bytes();
  if (grid.min_bytes == 0) f.fail("minbytes must be at least 1 byte");
  if (grid.max_bytes < grid.min_bytes) f.fail("maxbytes is below minbytes");
  if (grid.step_bytes == 0 && !(grid.step_factor > 1.0)) f.fail("stepfactor must be greater than 1");
  try {
    expand(grid);
  } catch (const UsageError& e) {
    f.fail(e.what());
  }
}

void parse_placement(const Field& f, RunOptions& o) {
  const std::string p = f.text();
  if (!set_placement(p, o)) f.fail(fmt::format("'{}': use one, both, out or in", p));
}

void parse_peers(const Field& f, RunOptions& o) {
  std::vector<int> peers;
  for (const auto& item : f.items()) peers.push_back(static_cast<int>(item.integer(0, 1 << 24)));
  if (peers.size() != 2 || peers[0] == peers[1]) f.fail("two different ranks, e.g. [0, 1]");
  o.peer_a = peers[0];
  o.peer_b = peers[1];
}

}  // namespace

Sweep parse_sweep(const Field& f, bool p2p, std::size_t index) {
  if (p2p) {
    f.expect_map({"name", "ops", "scopes", "minbytes", "maxbytes", "stepfactor", "stepbytes", "iters", "warmup",
                  "time_budget_s", "check", "datatype", "peers", "window"});
  } else {
    f.expect_map({"name", "ops", "scopes", "minbytes", "maxbytes", "stepfactor", "stepbytes", "iters", "warmup",
                  "time_budget_s", "check", "datatype", "redop", "root", "placement"});
  }
  Sweep s;
  s.name = f.has("name") ? f["name"].text() : fmt::format("{}[{}]", p2p ? "p2p" : "sweeps", index);
  RunOptions& o = s.options;
  if (p2p) o.ops = {Op::pingpong, Op::unidir, Op::bidir};
  if (auto v = f.find("ops")) o.ops = parse_ops(*v, p2p);
  if (auto v = f.find("scopes")) o.scopes = parse_scopes(*v);
  parse_grid(f, o.grid);
  if (auto v = f.find("iters")) o.iters = static_cast<int>(v->integer(1, kMaxIters));
  if (auto v = f.find("warmup")) o.warmup = static_cast<int>(v->integer(0, kMaxIters));
  if (auto v = f.find("time_budget_s")) o.time_budget_s = v->number(0, 86400);
  if (auto v = f.find("check")) o.check = v->boolean();
  if (auto v = f.find("datatype")) o.dtype = named<Dtype>(*v, v->text(), parse_dtype, allowed_dtypes());
  if (auto v = f.find("redop")) o.redop = named<RedOp>(*v, v->text(), parse_redop, allowed_redops());
  if (auto v = f.find("root")) o.root = static_cast<int>(v->integer(0, 1 << 24));
  if (auto v = f.find("placement")) parse_placement(*v, o);
  if (auto v = f.find("peers")) parse_peers(*v, o);
  if (auto v = f.find("window")) o.window = static_cast<int>(v->integer(1, 4096));
  return s;
}

PairsPlan parse_pairs(const Field& f) {
  f.expect_map({"size", "iters", "time_budget_s", "rails"});
  PairsPlan p;
  if (auto v = f.find("size")) p.size_bytes = v->bytes();
  if (auto v = f.find("iters")) p.iters = static_cast<int>(v->integer(1, kMaxIters));
  if (auto v = f.find("time_budget_s")) p.time_budget_s = v->number(0, 86400);
  if (auto v = f.find("rails")) p.rails = v->boolean();
  return p;
}

}  // namespace fb::accept
