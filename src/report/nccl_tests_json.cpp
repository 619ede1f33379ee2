// nccl-tests' -J output (version 3, as nccl-tests 2.19 writes it): the
// binary and its arguments, the NCCL version code, the devices and one
// entry per size with its out-of-place and in-place figures. And the reader
// of several files that picks JSON or text per file.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "nccl_tests_parts.hpp"

namespace fb::report {
namespace {

// Foreign JSON, read in any key order (the record's own lines use ordered_json).
using foreign_json = nlohmann::json;
using detail::Printed;
using detail::PrintedRow;

const foreign_json& need(const foreign_json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end())
    throw UsageError(fmt::format("{}: no \"{}\": not nccl-tests' -J output (or a version this reader does not know)",
                                 where, key));
  return *it;
}

Printed placement(const foreign_json& row, const char* key, const std::string& where) {
  Printed p;
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return p;
  const auto& t = need(*it, "time", where);
  if (!t.is_number()) return p;  // nccl-tests writes null where a placement did not run
  p.present = true;
  p.time_us = t.get<double>();
  if (const auto a = it->find("alg_bw"); a != it->end() && a->is_number()) p.algbw_gbps = a->get<double>();
  if (const auto b = it->find("bus_bw"); b != it->end() && b->is_number()) p.busbw_gbps = b->get<double>();
  if (const auto w = it->find("nwrong"); w != it->end() && w->is_number()) {
    const double wrong = w->get<double>();
    p.wrong = static_cast<std::int64_t>(wrong);
  }
  return p;
}

std::string text_of(const foreign_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

NcclTestsImport parse_nccl_tests_json(const std::string& text, const std::string& name, const ImportOptions& options) {
  const foreign_json doc = foreign_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw UsageError(fmt::format("{}:1: not valid JSON (nccl-tests' -J output is one JSON object)", name));
  NcclTestsImport out;
  out.files.push_back(name);
  if (const auto v = doc.find("nccl_version"); v != doc.end() && v->is_number_integer())
    out.nccl_version = nccl_version_from_code(v->get<long long>());
  NcclTestsTable t;
  t.where = name;
  const foreign_json& args = need(doc, "args", name);
  if (!args.is_array() || args.empty() || !args.front().is_string())
    throw UsageError(fmt::format("{}: \"args\" does not start with the binary", name));
  t.binary = detail::binary_in(args.front().get<std::string>());
  for (std::size_t i = 1; i < args.size(); ++i) t.args.push_back(text_of(args[i]));
  t.op = t.binary.empty() ? std::string() : detail::op_of_binary(t.binary, name);
  if (t.op.empty()) t.op = options.op;
  if (t.op.empty())
    throw UsageError(fmt::format("{}: args[0] '{}' names no nccl-tests test fabricbench knows: give --op", name,
                                 text_of(args.front())));
  if (const auto s = doc.find("start_time"); s != doc.end() && s->is_string()) t.started = s->get<std::string>();
  const foreign_json& config = need(doc, "config", name);
  t.iters = config.value("iterations", 0);
  t.warmup_iters = config.value("warmup_iters", 0);
  if (config.contains("validation")) t.validation = config.value("validation", 0) != 0;
  if (config.contains("graph")) t.graph = config.value("graph", 0) != 0;
  for (const auto& d : config.value("devices", foreign_json::array()))
    t.devices.push_back({d.value("rank", 0), d.value("hostname", std::string()), d.value("device", -1),
                         d.value("device_hex", std::string()), d.value("device_info", std::string())});
  t.nranks = t.devices.empty() ? options.ranks : static_cast<int>(t.devices.size());
  if (t.nranks <= 0) throw UsageError(fmt::format("{}: config.devices lists no ranks: give --ranks N", name));
  // {"count": 0, "okay": "true"} and {"bandwidth": 0.0, "okay": "unchecked"} in version 3.
  if (const auto o = doc.find("out_of_bounds"); o != doc.end() && o->is_object() && (*o)["count"].is_number_integer())
    t.out_of_bounds = (*o)["count"].get<std::int64_t>();
  if (const auto a = doc.find("average_bus_bandwidth"); a != doc.end() && a->is_object() && (*a)["bandwidth"].is_number())
    t.avg_busbw_gbps = (*a)["bandwidth"].get<double>();
  t.finished = doc.contains("end_time");
  std::size_t zero = 0, index = 0;
  for (const auto& r : need(doc, "results", name)) {
    const std::string where = fmt::format("{}: results[{}]", name, index++);
    PrintedRow row;
    row.where = where;
    const foreign_json& size = need(r, "size", where);
    if (!size.is_number_unsigned()) throw UsageError(fmt::format("{}: \"size\" is not a byte count", where));
    row.size = size.get<std::uint64_t>();
    row.count = r.value("count", std::uint64_t{0});
    row.type = r.value("type", std::string());
    row.redop = r.value("redop", std::string("none"));
    const foreign_json root = r.value("root", foreign_json(-1));
    row.root = root.is_number_integer() ? root.get<int>() : std::atoi(text_of(root).c_str());
    row.out_of_place = placement(r, "out_of_place", where);
    row.in_place = placement(r, "in_place", where);
    if (row.size == 0) {
      ++zero;
      continue;
    }
    detail::add_row(t, row);
  }
  if (zero) out.notes.push_back(fmt::format("{}: left out {} row(s) of size 0 (nothing moved: no figure to compare)",
                                            name, zero));
  if (!t.finished)
    out.failures.push_back(fmt::format("{}: no \"end_time\": the test did not finish (or the file was cut)", name));
  out.tables.push_back(std::move(t));
  return out;
}

NcclTestsImport read_nccl_tests(const std::vector<std::string>& paths, const ImportOptions& options) {
  NcclTestsImport all;
  for (const auto& path : paths) {
    const std::string text = read_input_file("report import nccl-tests", path);
    const auto first = text.find_first_not_of(" \t\r\n");
    NcclTestsImport one;
    if (first != std::string::npos && text[first] == '{') {
      one = parse_nccl_tests_json(text, path, options);
    } else {
      std::istringstream lines(text);
      one = parse_nccl_tests_text(lines, path, options);
    }
    all.files.push_back(path);
    const auto merge_version = [&](std::string& mine, const std::string& theirs, const char* what) {
      if (mine.empty()) {
        mine = theirs;
      } else if (!theirs.empty() && theirs != mine) {
        all.notes.push_back(fmt::format("{}: {} {} where an earlier file says {}: the record says {}", path, what,
                                        theirs, mine, mine));
      }
    };
    merge_version(all.nccl_version, one.nccl_version, "NCCL");
    merge_version(all.nccl_tests_version, one.nccl_tests_version, "nccl-tests");
    for (auto& t : one.tables) all.tables.push_back(std::move(t));
    for (auto& f : one.failures) all.failures.push_back(std::move(f));
    for (auto& n : one.notes) all.notes.push_back(std::move(n));
  }
  return all;
}

}  // namespace fb::report
