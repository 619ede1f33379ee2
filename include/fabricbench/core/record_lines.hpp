// One struct per kind of line of the results record (docs/results-schema.md),
// with its JSON both ways in one place (src/core/record_lines.cpp). Every
// writer fills a struct and every reader gets one, so no writer can misspell
// a key or drop one another writer has: the compiler holds the schema. The
// unit test tests/core/record_lines_test.cpp checks each struct writes
// exactly the keys the schema document lists.
//
// Nested values whose shape another module owns (a command's options, the
// watchdog's report, topo's GPU and NIC objects) travel whole as JsonValue.
//
// Reading: a key a line lacks reads as the field's default (older and
// hand-made records), except the keys a measurement line has had since 1.0;
// a key of the wrong type is an error naming it. Unknown keys are ignored, so
// a newer minor version stays readable.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "fabricbench/core/json_value.hpp"
#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb {

// ---- `run`: the header, the first line of every record -------------------

struct ProfileRef {  // `check`: the acceptance profile
  std::string name;
  std::string path;
  std::string source;
};

struct SweepRef {  // `check`: one sweep of the profile
  std::string name;
  JsonValue options;  // RunOptions' JSON (core/plan.hpp)
};

struct BuildRef {  // what the binary is (fabricbench --version), since 1.4
  std::string version;
  std::string git_commit;  // 12 hex digits, "unknown" outside a git checkout
  bool git_dirty = false;  // the tree had uncommitted changes
  std::string build_type;
  std::string compiler;
  std::string mpi_library;
  std::string cuda_built;  // the versions it was compiled against; "" without them
  std::string nccl_built;
};

struct PairsPlanRef {  // `check` with a pairs: section
  std::uint64_t size_bytes = 0;
  int iters = 0;
  double time_budget_s = 0;
  bool rails = false;
};

struct RunHeader {
  std::string schema_version;  // written as schema_version(), whatever this holds
  std::string command;         // run, pairs, topo, gemm, check, step
  std::string version;
  std::vector<std::string> argv;
  std::string start_time;
  std::string run_id;  // one id per run, on every measurement line and CSV row too (since 1.4)
  int ranks = -1;
  int nodes = -1;
  std::vector<std::string> hosts;
  std::vector<int> ranks_per_node;
  std::vector<int> rank_node;
  std::string mpi_library;
  // The thread level MPI ran at, as MPI names it: MPI_THREAD_SINGLE with
  // --timeout 0 (no watchdog thread), else MPI_THREAD_FUNNELED; Open MPI's
  // small-message latency differs between them. Since 1.19.
  std::optional<std::string> mpi_thread_level;
  std::optional<BuildRef> build;       // absent in records before 1.4
  std::optional<std::string> backend;  // absent in topo and gemm records
  std::optional<std::string> backend_version;
  // Made through the host test doubles of the GPU backends (since 1.7; absent:
  // false): the figures are simulated, and check and model refuse them.
  bool simulated = false;
  // Where each node's leader read its error counters around the rows ("/",
  // a test's copied tree) or "off" (--counters off: none read, so no
  // counters rule can pass on the record). Since 1.12; absent: run, check
  // read them from "/" since 1.11, other commands read none.
  std::optional<std::string> counters;
  JsonValue options;  // the command's own (run: RunOptions; pairs; gemm); null = absent
  std::optional<ProfileRef> profile;
  std::optional<std::vector<SweepRef>> sweeps;
  std::optional<PairsPlanRef> pairs;
};

// The minor of a schema version this reader's major can read ("1.20" ->
// 20, "1" -> 0); nullopt for another major or text that is no version.
std::optional<int> schema_minor_of(const std::string& version);

// The MPI thread level a run had: its header's mpi_thread_level; for a
// fabricbench record before 1.19 (an MPI library named, no level: every run
// asked for it then) MPI_THREAD_FUNNELED; unknown (nullopt) for a record
// without an MPI library (imported from nccl-tests).
std::optional<std::string> mpi_thread_level_of(const RunHeader& h);

// Whether a record's wall-clock rows timed iterations shorter than 50 us in
// groups (timing_groups.hpp): a fabricbench record of the mpi or mpi-cuda
// backend (or cuda's pageable host copies) since 1.20 did, one before timed
// each alone; unknown (nullopt) for another backend (nccl's events grouped
// all along) or an imported record.
std::optional<bool> host_timing_in_groups_of(const RunHeader& h);

// Whether a record's round trips (pingpong) were timed on the rank
// that starts and ends them (TimingPlan::times_count): a fabricbench record
// since 1.21 was, one before took the slower of the two ranks each
// iteration; unknown (nullopt) for an imported record.
std::optional<bool> round_trips_by_initiator_of(const RunHeader& h);

// A setting two runs differ in that moves a row's time whatever the fabric.
enum class SetupSetting { mpi_library, mpi_thread_level, host_timing, round_trip_timing };
struct SetupDifference {
  SetupSetting setting;
  std::string a, b;  // each run's value ("in groups" / "one by one" for host_timing)
};
// Every such setting in which `a` and `b` differ, where both headers say it
// (an imported record is not guessed at). report compare words each as a
// note, check --baseline as a refusal: one list for both.
std::vector<SetupDifference> setup_differences(const RunHeader& a, const RunHeader& b);

// ---- `inventory`: one per rank ---------------------------------------------

struct InventoryPath {
  std::string scope;  // intra, inter, rail, domain
  std::string cls;    // "class": NVLink, PCIe, SHM, IB, RoCE, TCP
  std::optional<double> peak_gbps;
  std::string basis;
  std::string unknown_reason;  // written only when peak_gbps is unknown
};

// The keys rules and readers use are typed; the hardware objects are topo's
// (topo::to_json(Inventory)) and stay as they are in `line`.
struct InventoryLine {
  int rank = -1;
  std::string host;
  int node = -1;
  int local_rank = -1;
  std::vector<InventoryPath> paths;
  std::vector<std::string> flags;
  std::string error;  // present only when reading the inventory failed
  // The whole line as topo made it (software, gpus, nics, rails, rank_gpu,
  // rank_cpus, gpu_matrix, gpus_note, unknown): written with the typed keys
  // above taking precedence. Null for a line made here from the fields alone.
  JsonValue line;
};
// Makes the typed view of a line topo made (throws naming a mistyped key).
InventoryLine inventory_line(const nlohmann::ordered_json& line);

// ---- `measurement` ---------------------------------------------------------

// Wrong elements one rank saw in one verified iteration (--check all).
struct WrongAt {
  int rank = 0;                // world rank
  std::int64_t iteration = 0;  // timed iteration, from 1
  std::int64_t elements = 0;
  bool operator==(const WrongAt&) const = default;
};
// At most this many WrongAt entries per row (the totals stay exact).
inline constexpr std::size_t kMaxWrongAt = 256;

// One measured row: an op at one size, scope and placement.
struct Measurement {
  std::string run_id;  // the header's; set by the record's writers (RowSink::begin)
  std::string op;
  std::string backend;
  std::string scope;
  std::string path;
  std::string dtype;
  std::string redop;  // "" when the op does not reduce
  int root = -1;      // -1 when the op has no root
  int nranks = 0;     // ranks in each group that ran the op
  int groups = 1;     // groups that ran it at once (nodes for intra, rails for rail)
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  bool in_place = false;
  int peer_a = -1;  // point-to-point ops: the two ranks (group ranks)
  int peer_b = -1;
  TimeStats time;  // per op, slowest rank of each iteration
  // Adaptive stop (RunOptions::median_ci or a time budget): what ended the
  // timed iterations (timing.hpp StopReason: ci, iterations, bytes, time); "" = exactly -n.
  std::string stopped_by;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  // The rank the others waited for most (largest mean lateness entering the
  // op, world rank), how late it was on average, and its own mean time.
  int slowest_rank = -1;
  double slowest_rank_lag_us = 0;
  double slowest_rank_mean_us = 0;
  std::int64_t wrong = -1;        // wrong elements over all ranks; -1 = not checked
  std::vector<int> wrong_ranks;   // world ranks that had wrong elements
  std::vector<WrongAt> wrong_at;  // --check all: where, by rank and iteration (capped at kMaxWrongAt)
  int pass = 0;                   // --duration: the sweep's pass, from 1; 0 = a single-pass run
  // Each world rank's mean time per op (-1: sat out), when the run asked for
  // it (RunOptions::per_rank_times): finds the node or rail that lags.
  std::vector<double> rank_mean_us;
  // The iteration times fell into two modes (core/modes.hpp), since 1.9;
  // absent when they did not, or were too few to tell.
  std::optional<TwoModes> modes;
};

// ---- `counters`: an error counter that moved during a measured row ----------

// One counter of one node that moved (or whose change cannot be told) while
// the row just before it in the record was measured (core/row_counters.hpp),
// since 1.11. A healthy run writes none.
struct CounterLine {
  std::string run_id;   // the header's; set by the record's writer
  std::size_t row = 0;  // the measurement line it follows: its index among the record's measurement lines, from 0
  std::string op;       // that row's op, scope, size and placement
  std::string scope;
  std::uint64_t bytes = 0;
  bool in_place = false;
  int node = -1;  // the node whose leader read it
  std::string host;
  std::string device;                  // "mlx5_0:1", "eth0", "0000:17:00.0", "node"
  std::string device_kind;             // port, interface, pci, node (node-wide: every process's traffic), gpu
  // Did the row use that device (core/row_counters.hpp, row_uses)? Since
  // 1.13; true when absent: an older record cannot tell.
  bool exercised = true;
  std::string counter;                 // symbol_error, tcp_retrans_segs, ... (docs/results-schema.md)
  std::optional<std::uint64_t> delta;  // null: unknown, unknown_reason says why
  std::string unknown_reason;          // written only when delta is null
};

// ---- `skip`: a measurement, op or scope that did not run -------------------

struct Skip {
  std::string op;  // "" for a whole scope
  std::string scope;
  std::uint64_t bytes = 0;  // 0 = every size
  bool in_place = false;
  std::string reason;
};

// ---- `pair`, `node`, `finding`: the node-pair matrix -----------------------

// A pair's two modes and the measurement they were found in (unidir_ab,
// unidir_ba, bidir or latency).
struct PairModes : TwoModes {
  std::string op;
};

struct PairLine {
  int rail = 0;
  bool retest = false;
  int round = 0;
  int node_a = -1;
  int node_b = -1;
  std::string host_a;
  std::string host_b;
  std::string path;
  std::uint64_t bytes = 0;
  int window = 0;
  std::uint64_t latency_bytes = 0;
  std::size_t iterations = 0;
  std::optional<double> unidir_ab_gbps;  // absent in a hand-made line: the rule cannot use it
  std::optional<double> unidir_ba_gbps;
  std::optional<double> bidir_gbps;
  std::optional<double> latency_us;
  std::optional<double> latency_p99_us;
  // The first of the pair's measurements whose times fell into two modes
  // (core/modes.hpp) and which one; since 1.9.
  std::optional<PairModes> modes;
};

struct NodeLine {
  int rail = 0;
  int node = -1;
  std::string host;
  int links = 0;
  int low_links = 0;
  double unidir_median_gbps = 0;
  double unidir_min_gbps = 0;
  double bidir_median_gbps = 0;
  double latency_median_us = 0;
  bool suspect = false;
  bool reference_node = false;
};

struct FindingLine {
  int rail = 0;
  std::string kind;  // node or link
  int node = -1;     // kind node
  int low_links = 0;
  int links = 0;
  int node_a = -1;  // kind link
  int node_b = -1;
  std::vector<std::string> hosts;
  double ratio = 0;
  std::string worst;
  double threshold = 0;
  std::optional<std::string> retested_against;  // null: not retested
  std::optional<double> retest_ratio;
  bool confirmed = false;
  bool intermittent = false;
  std::string detail;
};

// ---- `check`: the verdict of one acceptance rule ---------------------------

struct CheckRow {  // the deciding measurement
  std::string op;
  std::string scope;
  std::uint64_t bytes = 0;
  bool in_place = false;
  std::string dtype;
  std::string path;
  int nranks = 0;
  std::optional<std::pair<int, int>> peers;  // point-to-point rows
};

struct CheckLine {
  std::string rule;
  std::string kind;
  std::string status;  // pass, fail, skip, error
  bool optional = false;  // the profile marks the rule optional: a skip does not fail the check (since 1.4)
  std::optional<double> measured;
  std::optional<double> expected;
  std::string unit;
  std::string expected_text;
  std::optional<double> margin;
  std::string reason;
  std::optional<CheckRow> row;
};

// ---- `gemm`, `step`, `step_model` ------------------------------------------

struct GemmLine {
  int rank = 0;
  std::string host;
  int device = -1;
  std::string gpu;
  std::string pci_bus_id;
  std::string dtype;
  int m = 0;
  int n = 0;
  int k = 0;
  std::size_t iterations = 0;
  double time_min_us = 0;
  double time_median_us = 0;
  double time_max_us = 0;
  double tflops = 0;
};

struct StepModeTimes {
  std::string mode;  // the key in `modes`: compute_only, comm_only, serial, overlapped
  std::size_t iterations = 0;
  double time_min_us = 0;
  double time_median_us = 0;
  double time_mean_us = 0;
  double time_p99_us = 0;
  double time_max_us = 0;
  int slowest_rank = -1;
  double slowest_rank_mean_us = 0;
};

struct StepComm {
  std::string name;
  std::string group;
  std::string op;
  std::uint64_t bytes = 0;
  int calls = 0;
  double window = 0;
  double per_call_us = 0;
  double per_step_us = 0;
};

// One product of a layer on the GPU step (since 1.17): the slowest rank's
// median beside the rate the model prices it at.
struct StepProduct {
  std::string name;  // "qkv", "qkv dgrad", ...
  long long m = 0;
  long long n = 0;
  long long k = 0;
  double measured_us = 0;
  double measured_tflops = 0;
  int slowest_rank = -1;
  double model_tflops = 0;  // 0 where the model prices the layer at one rate
};

struct StepLine {
  std::string workload;
  std::string backend;
  int dp = 0;
  int tp = 0;
  int pp = 0;
  std::string kernel;
  double planned_compute_us = 0;    // the products
  double planned_non_gemm_us = 0;   // memory-bound work, the optimizer's included (since 1.16)
  double planned_optimizer_us = 0;  // since 1.16
  std::vector<StepModeTimes> modes;
  // compute_only's parts, per step the slowest rank, median (since 1.16)
  double compute_us = 0;
  double non_gemm_us = 0;
  double optimizer_us = 0;
  double comm_share = 0;
  double exposed_share = 0;
  double efficiency = 0;
  double hidden_us = 0;
  std::vector<StepComm> comms;
  // The GPU step's products of one layer, shape by shape (since 1.17; none on
  // the host), and the model's compute source and layer rate they are set beside.
  std::vector<StepProduct> products;
  std::string products_dtype;  // their datatype, the workload's (since 1.18)
  std::string products_model_source;
  double products_model_tflops = 0;
};

struct StepModelLine {
  std::string basis;
  std::string network;
  std::string node;
  double compute_us = 0;
  double non_gemm_us = 0;   // since 1.16
  double optimizer_us = 0;  // since 1.16
  double comm_us = 0;
  double exposed_us = 0;
  double step_us = 0;
  double comm_share = 0;
  double exposed_share = 0;
  double efficiency = 0;
  double step_diff_pct = 0;
};

// ---- `storage`: one I/O pattern at one node count (fabricbench storage) ----

struct StorageLine {
  std::string run_id;
  std::string target;         // "path" (--path: the shared filesystem) or "local" (--local)
  std::string path;           // the folder as given
  std::string fs_type;        // rank 0's mount of it: nfs4, lustre, fuse.sshfs, ext4, tmpfs ...
  std::string fs_kind;        // network, parallel, local, memory, fuse, other
  std::string mount_source;   // "server:/export", "/dev/nvme0n1p1"
  std::string mount_options;  // the mount's own ("rw,relatime") and the filesystem's, comma-joined
  bool shared = false;        // every node saw rank 0's run folder: one filesystem for all
  std::string pattern;        // seq_write, seq_read, small_write, small_read
  std::string mode;           // asked: direct (O_DIRECT) or buffered
  bool o_direct = false;      // O_DIRECT in effect on every rank
  std::string cache;          // bypassed, dropped, synced, cached (a memory figure)
  std::string note;           // why O_DIRECT is off though asked, why the figure is cached; "" = none
  std::string io_engine;      // "psync": pread/pwrite, one at a time (fio's ioengine of that name); "" before 1.8
  int queue_depth = 0;        // calls in flight per rank (1); 0 before 1.8
  std::string sync;           // "end" (one fsync after the last block), "file" (each file's before close), "none"
  std::string fallocate;      // "none": nothing reserved before writing
  std::uint64_t block_bytes = 0;  // bytes per read or write call
  std::uint64_t file_bytes = 0;   // bytes per file
  std::uint64_t files = 0;        // files per rank
  int nodes = 0;                  // nodes doing I/O at once
  int ranks = 0;                  // ranks doing I/O at once
  std::vector<std::string> hosts;  // those nodes
  std::uint64_t bytes = 0;        // moved by all of them
  std::uint64_t ops = 0;          // calls (sequential) or files (small files), all ranks
  double elapsed_us = 0;          // the slowest rank's time
  double aggregate_gbps = 0;      // bytes / elapsed_us
  double iops = 0;                // ops / elapsed_us
  std::vector<double> node_gbps;  // per node (hosts order): its bytes / its slowest rank's time
  double node_min_gbps = 0;
  double latency_p50_us = 0;  // per call or per file, over every rank's
  double latency_p99_us = 0;
  double latency_max_us = 0;
};

// ---- `diagnosis`: fabricbench diagnose, one per GPU and one per node -------

// A figure is null when unknown; the line's `unknown` says why.
struct DiagnosisGpuFigures {
  std::optional<double> sm_util_pct, mem_util_pct, memory_used_pct, pcie_tx_gbps, pcie_rx_gbps, nvlink_tx_gbps,
      nvlink_rx_gbps, nvlink_busy_pct, sm_clock_pct, throttled_pct, power_w, power_pct, temperature_max_c;
  std::vector<std::string> throttle_reasons;
};

struct DiagnosisNodeFigures {
  std::size_t gpus = 0;  // GPUs sampled
  std::string nic;       // the busiest NIC
  std::optional<double> nic_tx_gbps, nic_rx_gbps, nic_busy_pct, process_cpu_cores;
  std::optional<bool> process_alive;
  std::size_t iterations = 0;
  std::string iter_unit;  // "s" or "s/sample"
  std::optional<double> iter_median, iter_spread_pct;
};

struct DiagnosisLine {
  std::string level;  // gpu or node
  int node = -1;
  std::string host;
  int gpu = -1;           // gpu lines: NVML's index
  std::string gpu_model;  // gpu lines
  std::string bus_id;     // gpu lines
  std::string verdict;    // throttled, communication_bound, input_starved, compute_bound, idle, undetermined
  std::vector<std::string> also;
  std::string reason;
  double window_s = 0;
  std::size_t samples = 0;
  std::optional<DiagnosisGpuFigures> gpu_figures;    // gpu lines, under "figures"
  std::optional<DiagnosisNodeFigures> node_figures;  // node lines, under "figures"
  std::vector<std::pair<std::string, std::string>> unknown;  // figure -> why it is unknown
};

// ---- `summary`: the closing line -------------------------------------------

// run and check: what the sweeps did.
struct SweepTotals {
  std::size_t rows = 0;  // measurement lines before the summary
  std::size_t skipped = 0;
  // Complete runs only (an early end knows only the counts above):
  struct Figures {
    std::int64_t wrong = -1;                    // -1: not checked
    std::optional<std::vector<int>> wrong_ranks;  // checked runs
    std::optional<int> passes;                  // --duration
    double avg_busbw_gbps = 0;
  };
  std::optional<Figures> figures;
};

struct PairsTotals {
  std::size_t pairs = 0;
  std::size_t retests = 0;
  int rounds = 0;
  int retest_rounds = 0;
  std::size_t findings = 0;
  std::size_t failing_findings = 0;
  std::vector<std::string> bad_nodes;
  double reference_unidir_gbps = 0;
  double reference_bidir_gbps = 0;
  double threshold = 0;
};

struct TopoTotals {
  int ranks = 0;
  int nodes = 0;
  std::size_t flags = 0;
  bool heterogeneous = false;
  JsonValue differences;  // topo::to_json(differences)
};

struct GemmSlowest {
  std::string dtype;
  int rank = 0;
  std::string host;
  int device = -1;
  std::string pci_bus_id;
  double tflops = 0;
  double fastest_tflops = 0;
  double below_fastest_pct = 0;
};

struct GemmTotals {
  std::size_t rows = 0;
  std::vector<GemmSlowest> slowest;
};

// Every summary has status, elapsed_s and exit_code; a run that ended early
// (or, for run, measured nothing it was asked for) says why in `reason`, and
// the watchdog's `report` says where; the rest is the command's own part.
struct Summary {
  std::string status = "complete";  // complete, hang, rank_lost, error, killed
  std::string reason;               // "" = absent
  JsonValue report;                 // null = absent
  std::optional<SweepTotals> sweep;  // run, check
  std::optional<PairsTotals> pairs;
  std::optional<TopoTotals> topo;
  std::optional<GemmTotals> gemm;
  double elapsed_s = 0;
  int exit_code = 0;
};

// ---- both ways -------------------------------------------------------------

// Every line but the summary (which RecordWriter::seal alone writes).
using RecordLine = std::variant<RunHeader, InventoryLine, Measurement, Skip, PairLine, NodeLine, FindingLine, CheckLine,
                                GemmLine, StepLine, StepModelLine, StorageLine, DiagnosisLine, CounterLine>;

nlohmann::ordered_json to_json(const RunHeader& line);
nlohmann::ordered_json to_json(const InventoryLine& line);
nlohmann::ordered_json to_json(const Measurement& line);
nlohmann::ordered_json to_json(const Skip& line);
nlohmann::ordered_json to_json(const PairLine& line);
nlohmann::ordered_json to_json(const NodeLine& line);
nlohmann::ordered_json to_json(const FindingLine& line);
nlohmann::ordered_json to_json(const CheckLine& line);
nlohmann::ordered_json to_json(const CheckRow& row);
nlohmann::ordered_json to_json(const GemmLine& line);
nlohmann::ordered_json to_json(const StepLine& line);
nlohmann::ordered_json to_json(const StepModelLine& line);
nlohmann::ordered_json to_json(const StorageLine& line);
nlohmann::ordered_json to_json(const DiagnosisLine& line);
nlohmann::ordered_json to_json(const CounterLine& line);
nlohmann::ordered_json to_json(const Summary& line);
nlohmann::ordered_json to_json(const RecordLine& line);

// Each throws std::runtime_error naming the missing or mistyped key.
RunHeader header_from_json(const nlohmann::ordered_json& j);
InventoryLine inventory_from_json(const nlohmann::ordered_json& j);
Measurement measurement_from_json(const nlohmann::ordered_json& j);
// What every measurement obeys, checked where records are read (issue 35:
// negative medians and 1e308 bandwidths were accepted and printed as
// "+inf%"): times from 0 to 1e13 us and bandwidths from 0 to 1e12 GB/s, all
// finite; median, mean and p99 within [min, max]; busbw = algbw x the op's
// factor on its rank count. Throws std::runtime_error.
void check_measurement_figures(const Measurement& m);

// An op or scope name this version does not know, in a measurement line:
// an error in a record of this schema version or older, a line left out with
// a note in a newer minor's (which may add ops and scopes).
struct UnknownName : std::runtime_error {
  using std::runtime_error::runtime_error;
};
Skip skip_from_json(const nlohmann::ordered_json& j);
PairLine pair_from_json(const nlohmann::ordered_json& j);
NodeLine node_from_json(const nlohmann::ordered_json& j);
FindingLine finding_from_json(const nlohmann::ordered_json& j);
CheckLine check_from_json(const nlohmann::ordered_json& j);
GemmLine gemm_from_json(const nlohmann::ordered_json& j);
StepLine step_from_json(const nlohmann::ordered_json& j);
StepModelLine step_model_from_json(const nlohmann::ordered_json& j);
StorageLine storage_from_json(const nlohmann::ordered_json& j);
DiagnosisLine diagnosis_from_json(const nlohmann::ordered_json& j);
CounterLine counter_from_json(const nlohmann::ordered_json& j);
// `command` is the header's: it says which part a summary has.
Summary summary_from_json(const nlohmann::ordered_json& j, const std::string& command);

// A new run id: UTC time and 64 random bits, "20261129T100000Z-1f2e3d4c5b6a7988".
// Made on rank 0 (Comm::bcast_string_quiet hands it to the others).
std::string make_run_id();

}  // namespace fb
