// Path provenance for NCCL rows: what NCCL says it chose, read from its own
// debug output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with INIT and GRAPH) with
// the line parser `fabricbench report nccl-log` uses (nccl_log_line.hpp).
// Pure text processing, so it is tested on recorded log lines without a GPU.
//
// Each rank reads its own process's log (NCCL writes the connections a rank
// makes into that rank's log only); the nccl backend gathers every member's
// description and merges them (merge_nccl_paths), so a row names every
// transport of its communicator, not just world rank 0's.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/types.hpp"

namespace fb {

struct NcclLogFacts {
  std::string version;               // "2.28.3+cuda13.0"; "" when not seen
  std::set<std::string> transports;  // tokens (nccl_log::token): "P2P/CUMEM", "SHM", "NET/IB/GDRDMA", "NET/IB/GDRDMA/PXN"...
  std::set<std::string> intra_types; // NCCL's path types inside a node: "NVL", "NVB", "C2C", "PIX", "PHB", "SYS"...
  std::string network;               // "IB", "Socket", or a plugin's name; "" when not seen
  int nvls_channels = 0;             // NVLS (NVLink SHARP) set up with this many channels; 0: not
  bool collnet = false;              // CollNet (in-network reduction, e.g. SHARP) connected
  // NCCL_DEBUG_SUBSYS=TUNING only: NCCL's function name -> "Algo/proto" it chose ("Ring/LL128").
  std::map<std::string, std::set<std::string>> algorithms;
};

NcclLogFacts parse_nccl_log(std::string_view text);
// Only the connections between two ranks of the communicator (either way):
// a point-to-point row's traffic, not every path the communicator set up
// (a pingpong 0<->8 read "NVLink+NET" from the collectives before it; issue
// 34, defect 9).
NcclLogFacts parse_nccl_log(std::string_view text, int rank_a, int rank_b);

// The transports of a communicator as one token: P2P ones carry the link
// ("P2P/CUMEM/NVLink", "P2P/IPC/PCIe") when the topology lines said which;
// several are joined with '+' ("P2P/CUMEM/NVLink+NET/IB/GDRDMA"). "local" for
// a one-rank communicator (NCCL copies on the device), "unknown" when the log
// named nothing.
std::string describe_nccl_path(const NcclLogFacts& facts, int nranks);

// The same for a row of `op`, which adds what serves that op beside the
// channels: "+NVLS" (NVLink SHARP, which prints no "via" lines) and
// "+CollNet" for the collectives NCCL runs on them (all_reduce, all_gather,
// reduce_scatter) when the communicator set them up; NCCL picks among them
// per call. With tuning lines for the op, " algo Ring/LL128;NVLS/Simple":
// what NCCL picked. The token stays free of spaces and commas.
std::string describe_nccl_path(const NcclLogFacts& facts, int nranks, Op op);

// One description from every member's (each from its own log): the union of
// their tokens and algorithms. "local" or "unknown" only when all say so.
std::string merge_nccl_paths(const std::vector<std::string>& per_rank);

// NCCL's name of the function an op calls ("AllReduce"); "" for ops built
// from sends and receives.
std::string_view nccl_function(Op op);

// " NCCL_ALGO=Ring NCCL_PROTO=Simple" for the values the user pinned (empty
// ones omitted; commas become ';' so the path stays one CSV field).
std::string pinned_tuning(const char* algo, const char* proto);

}  // namespace fb
