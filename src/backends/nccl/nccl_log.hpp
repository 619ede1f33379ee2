// Path provenance for NCCL rows: what NCCL says it chose, read from its own
// debug output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with INIT and GRAPH).
// Pure text processing, so it is tested on recorded log lines without a GPU.
//
// The lines it reads (shapes as NCCL 2.x prints them):
//   "NCCL version 2.28.3+cuda13.0"
//   "... NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"
//   "... NCCL INFO Channel 01/0 : 3[3] -> 1[1] [send] via NET/IB/2/GDRDMA"
//   "... NCCL INFO Channel 00 : 0[0] -> 4[4] via SHM/direct/direct"
//   "... NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 20.0/20.0, type NVL/PIX, sameChannels 1"
//   "... NCCL INFO Using network IB"
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace fb {

struct NcclLogFacts {
  std::string version;               // "2.28.3+cuda13.0"; "" when not seen
  std::set<std::string> transports;  // "P2P/CUMEM", "P2P/IPC", "P2P/direct", "SHM", "NET/IB/GDRDMA", "NET/Socket"...
  std::set<std::string> intra_types; // NCCL's path types inside a node: "NVL", "NVB", "C2C", "PIX", "PHB", "SYS"...
  std::string network;               // "IB", "Socket", or a plugin's name; "" when not seen
};

NcclLogFacts parse_nccl_log(std::string_view text);

// The transports of a communicator as one token: P2P ones carry the link
// ("P2P/CUMEM/NVLink", "P2P/IPC/PCIe") when the topology lines said which;
// several are joined with '+' ("P2P/CUMEM/NVLink+NET/IB/GDRDMA"). "local" for
// a one-rank communicator (NCCL copies on the device), "unknown" when the log
// named nothing.
std::string describe_nccl_path(const NcclLogFacts& facts, int nranks);

// " NCCL_ALGO=Ring NCCL_PROTO=Simple" for the values the user pinned (empty
// ones omitted; commas become ';' so the path stays one CSV field).
std::string pinned_tuning(const char* algo, const char* proto);

}  // namespace fb
