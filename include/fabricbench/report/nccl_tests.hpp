// nccl-tests' results as a fabricbench record, so runs people already have go
// through `report compare`, `report html`, `model fit` and `check --results`.
// Reads the text a *_perf binary prints (the table, with or without mpirun's
// "[1,0]<stdout>:" or srun's "0: " prefixes, several tests in one log, NCCL
// INFO lines between them) and its `-J` JSON. What nccl-tests does not say is
// not invented: a row carries one time (nccl-tests prints the mean over its
// timed iterations), so `iterations` is 1 and the spread is unknown; the path
// and the hardware's spec peaks are unknown (no inventory lines).
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"

namespace fb::report {

// One rank as nccl-tests lists it ("#  Rank  0 Group  0 Pid 556 on vm device 0 [0x06] NVIDIA H200").
struct NcclTestsDevice {
  int rank = 0;
  std::string host;
  int device = -1;
  std::string bus_id;
  std::string name;
};

// One test: one *_perf binary's table.
struct NcclTestsTable {
  std::string op;      // fabricbench's name (nccl-tests' own: all_reduce_perf -> all_reduce)
  std::string where;   // "FILE:LINE" of the table's column heads, or "FILE" for JSON
  std::string binary;  // "all_reduce_perf" when the log says
  std::vector<std::string> args;  // the binary's arguments when the log says (JSON always)
  int nranks = 0;
  std::vector<NcclTestsDevice> devices;  // by rank; empty when the log lists none
  int iters = 0;                         // timed iterations (-n), 0 = not said
  int warmup_iters = 0;
  std::optional<bool> validation;  // -c
  std::optional<bool> graph;       // -G
  std::string started;             // the JSON's start_time as written (local time, zone unknown)
  std::optional<std::int64_t> out_of_bounds;  // "# Out of bounds values : 0 OK"
  std::optional<double> avg_busbw_gbps;       // "# Avg bus bandwidth : ..."
  bool finished = false;  // nccl-tests' closing lines are there (a failed test or a cut log has none)
  std::vector<Measurement> rows;  // out-of-place then in-place for each size, as nccl-tests prints them
};

struct NcclTestsImport {
  std::vector<std::string> files;
  std::string nccl_version;        // "2.28.9"; "" when no file says
  std::string nccl_tests_version;  // "2.19.6"; "" when no file says
  std::vector<NcclTestsTable> tables;
  std::vector<std::string> failures;  // "FILE:LINE: Test NCCL failure ..." lines, and unfinished tables
  std::vector<std::string> notes;     // what the import could not carry over, said on stderr
};

struct ImportOptions {
  std::string op;        // --op: for tables whose log names no test binary; "" = from the log
  int ranks = 0;         // --ranks: for logs that list no ranks; 0 = from the log
};

// Each throws fb::UsageError naming "FILE:LINE" and the line for what it
// cannot read (an unknown table layout, a row that does not fit its heads, a
// table whose op or rank count the log does not say).
NcclTestsImport parse_nccl_tests_text(std::istream& in, const std::string& name, const ImportOptions& options);
NcclTestsImport parse_nccl_tests_json(const std::string& text, const std::string& name, const ImportOptions& options);
// Reads each file as JSON (it starts with '{') or text, and merges them.
NcclTestsImport read_nccl_tests(const std::vector<std::string>& paths, const ImportOptions& options);

// The record's lines: the header's import-specific part (`command` "import",
// backend nccl and its version, hosts and ranks from the device lists, the
// sources in `options`), the measurements with `run_id`, and the summary.
// The caller adds version, argv, start time and build, and writes them
// through RecordWriter.
struct ImportRecord {
  RunHeader header;
  std::vector<Measurement> rows;
  Summary summary;
};
ImportRecord import_record(const NcclTestsImport& import, const std::string& run_id);

// Exposed for tests: "22809" -> "2.28.9" (NCCL_VERSION_CODE since 2.9: major*10000 + minor*100 + patch).
std::string nccl_version_from_code(long long code);

}  // namespace fb::report
