#include "fabricbench/core/record.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/core/log.hpp"

namespace fb {

using json = nlohmann::ordered_json;

std::string schema_version() { return fmt::format("{}.{}", kSchemaMajor, kSchemaMinor); }

std::string RecordWriter::open(const std::string& path, bool overwrite) {
  std::lock_guard lock(mutex_);
  return file_.open(path, overwrite);
}

namespace {

std::string text_of(const json& line) {
  std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
  text += '\n';
  return text;
}

}  // namespace

std::string line_text(const RecordLine& line) { return text_of(to_json(line)); }
std::string line_text(const Summary& summary) { return text_of(to_json(summary)); }

void RecordWriter::write(const RecordLine& line) {
  const std::string text = line_text(line);  // outside the lock: the watchdog's seal() must not wait on a big line
  std::lock_guard lock(mutex_);
  if (!sealed_) write_locked(text);
}

bool RecordWriter::seal(const Summary& summary) noexcept {
  try {
    const std::string text = line_text(summary);
    std::lock_guard lock(mutex_);
    if (sealed_) return false;
    sealed_ = true;
    return write_locked(text) && file_.sync();
  } catch (const std::exception& e) {
    // Only allocation can throw here; the watchdog's thread must not die of it.
    // So a plain fprintf, not user_log(): it allocates nothing on this death path.
    std::fprintf(stderr, "fabricbench: cannot close the results file '%s': %s\n", file_.path().c_str(), e.what());
    return false;
  }
}

bool RecordWriter::write_locked(const std::string& text) { return file_.append(text); }

void RecordWriter::sync() {
  std::lock_guard lock(mutex_);
  file_.sync();
}

std::string RecordWriter::error() const {
  std::lock_guard lock(mutex_);
  return file_.error();
}

namespace {

// A text field of a line, "" when absent; another type is an error naming the line.
[[nodiscard]] std::string text_field(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) return {};
  if (!it->is_string()) throw std::runtime_error(fmt::format("{}: \"{}\" is not a string ({})", where, key, it->dump()));
  return it->get<std::string>();
}

// The record's minor version; throws for another major.
int check_version(const std::string& version, const std::string& path) {
  const auto minor = schema_minor_of(version);
  if (!minor)
    throw std::runtime_error(fmt::format("{}: schema version '{}' is not supported (this fabricbench reads {}.x); use "
                                         "the fabricbench version that wrote it",
                                         path, version, kSchemaMajor));
  return *minor;
}

// Files one line into its typed list. A type this version does not know (a
// newer minor's line) is counted and left out.
void take_line(Results& r, const std::string& type, const json& j) {
  if (type == "inventory") {
    r.inventory.push_back(inventory_from_json(j));
  } else if (type == "measurement") {
    r.measurements.push_back(measurement_from_json(j));
  } else if (type == "skip") {
    r.skips.push_back(skip_from_json(j));
  } else if (type == "pair") {
    r.pairs.push_back(pair_from_json(j));
  } else if (type == "node") {
    r.nodes.push_back(node_from_json(j));
  } else if (type == "finding") {
    r.findings.push_back(finding_from_json(j));
  } else if (type == "check") {
    r.checks.push_back(check_from_json(j));
  } else if (type == "gemm") {
    r.gemms.push_back(gemm_from_json(j));
  } else if (type == "step") {
    r.steps.push_back(step_from_json(j));
  } else if (type == "step_model") {
    r.step_models.push_back(step_model_from_json(j));
  } else if (type == "storage") {
    r.storage.push_back(storage_from_json(j));
  } else if (type == "diagnosis") {
    r.diagnoses.push_back(diagnosis_from_json(j));
  } else if (type == "counters") {
    r.counters.push_back(counter_from_json(j));
  } else if (type == "summary") {
    r.summary = summary_from_json(j, r.header.command);
    r.status = r.summary->status;
    r.complete = r.status == "complete";
  }
}

}  // namespace

Results read_results(const std::string& path) {
  check_input_file("results file", path);
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("results file '{}': cannot read it: {}", path, std::strerror(errno)));
  Results r = parse_results(in, path);
  // On stderr in every command: the alone commands (model, report) print their results on stdout.
  if (r.truncated) user_log().warn("fabricbench: note: {}", r.truncated_note);
  return r;
}

Results parse_results(std::istream& in, const std::string& path) {
  Results r;
  r.path = path;
  std::string text;
  std::size_t line_no = 0;
  int record_minor = 0;
  std::size_t unknown = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (text.empty()) continue;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      // A writer puts a line's newline in the same write as the line: only the
      // last line, without its newline, can be what a crash cut.
      if (in.eof() && !r.line_count == 0) {
        r.truncated = true;
        r.truncated_note = fmt::format(
            "{}:{}: the last line is cut (the run was cut off): kept the {} whole lines "
            "before it",
            path, line_no, r.line_count);
        break;
      }
      throw std::runtime_error(fmt::format("{}:{}: not a JSON object{}", path, line_no,
                                           in.eof() ? " (the last line is incomplete: the run was cut off)" : ""));
    }
    const std::string where = fmt::format("{}:{}", path, line_no);
    const std::string type = text_field(j, "type", where);
    if (type.empty()) throw std::runtime_error(fmt::format("{}: line has no \"type\"", where));
    try {
      if (r.line_count == 0) {
        if (type != "run")
          throw std::runtime_error(fmt::format("the first line must be the run header, found \"{}\"", type));
        record_minor = check_version(text_field(j, "schema_version", where), path);
        r.header = header_from_json(j);
      } else if (type == "run") {
        // Two runs written into one file, or two records joined: read as one,
        // their rows would be merged as if one run had measured them all.
        throw std::runtime_error(
            fmt::format("a second run header: the file holds two records (the second begins "
                        "here, after {} lines of the first); split it at this line",
                        r.line_count));
      } else {
        take_line(r, type, j);
      }
    } catch (const UnknownName& e) {
      // A newer minor may add ops and scopes: its line is left out, said once.
      if (record_minor <= kSchemaMinor) throw std::runtime_error(fmt::format("{}: {}", where, e.what()));
      if (unknown++ == 0)
        user_log().warn(
            "fabricbench: note: {}: {} (the record is schema {}, newer than this fabricbench's {}): lines "
            "with names this version does not know are left out",
            where, e.what(), r.header.schema_version, schema_version());
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (what.starts_with(path + ":")) throw;  // already names the file
      throw std::runtime_error(fmt::format("{}: {}", where, what));
    }
    ++r.line_count;
  }
  if (r.line_count == 0) throw std::runtime_error(fmt::format("{}: empty results file (no run header)", path));
  return r;
}

void refuse_simulated(const Results& r, const std::string& path) {
  if (!r.header.simulated) return;
  throw UsageError(
      fmt::format("'{}' was made through fabricbench's test doubles of the GPU backends ({}): its "
                  "figures are simulated, not measured; give the record of a run on real hardware",
                  path, r.header.backend_version.value_or("simulated")));
}

}  // namespace fb
