// One line of NCCL's debug output (NCCL_DEBUG=INFO), taken apart: who wrote
// it (host, process, GPU) and what it says about a communicator. Pure text
// processing, shared by the nccl backend's path column and `fabricbench
// report nccl-log`, so it is tested on recorded lines without a GPU.
//
// Lines are found by their " NCCL INFO " / " NCCL WARN " marker anywhere in
// the line, so any launcher prefix before NCCL's own "host:pid:tid [dev]"
// works: mpirun --tag-output ("[1,3]<stdout>:"), srun --label ("3: "),
// timestamps. The shapes read, as NCCL 2.28 prints them (src/init.cc,
// src/transport/{p2p,shm,net,coll_net}.cc, src/enqueue.cc), and the older
// spellings NCCL 2.4-2.18 printed:
//   "NCCL version 2.28.9+cuda13.0"
//   "ncclCommInitRankConfig comm 0x55.. rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x9d.. - Init START"
//   "ncclCommSplit comm 0x.. rank 3 nranks 8 ... parent 0x.. color 1 key 3 commId 0x.. ... - Init COMPLETE"
//   "comm 0x55.. rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"
//   "MNNVL busId 0x801000 fabric UUID 5a1c.93e0 cliqueId 0xa state 3 healthMask 0x2 degradedBw false"
//                                                  (src/init.cc fillInfo; "degradedBw" only in newer NCCL)
//   "MNNVL 1 cliqueId a cliqueSize 8 cliqueRank 0 nvlDomainSize 8"   (src/mnnvl.cc; no "nvlDomainSize" before 2.28)
//   "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"           (also /CE, MNNVL, IPC, "direct pointer")
//   "Channel 00/0 : 0[0] -> 9[1] via P2P/indirect/1[1]/read"
//   "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct"          (older: "via direct shared memory")
//   "Channel 02/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA"
//   "Channel 03/0 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA(PCI)/Shared"   (PXN: the NIC of rank 1)
//   "Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA"       (plugin names may hold spaces)
//   "Ring 00 : 0[0] -> 1[1] via P2P/IPC"                        (NCCL before 2.12)
//   "CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA"
//   "24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer"
//   "NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)"
//   "Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX, sameChannels 1"
//   "Using network IB"
//   "AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}"  (NCCL_DEBUG_SUBSYS=TUNING)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb::nccl_log {

// Who wrote the line: NCCL's "host:pid:tid [cudaDev]" before its level.
struct Writer {
  std::string host;  // "" when the line has no such prefix
  std::string pid;
  int device = -1;
  std::string process() const { return host + ":" + pid; }
};

// What a connection goes through, from the text after "via ".
struct Transport {
  std::string kind;       // "P2P", "SHM", "NET", "COLLNET"
  std::string mechanism;  // P2P: "CUMEM", "MNNVL", "IPC", "direct", "indirect"; SHM: "direct/direct", "CE/direct"...;
                          // NET, COLLNET: the network's name ("IB", "Socket", "AWS Libfabric")
  int net_device = -1;    // NET, COLLNET: the NIC's index
  int via_rank = -1;      // NET with PXN: the rank whose NIC carries it; P2P/indirect: the intermediate rank
  bool gdr = false;       // GPUDirect RDMA ("/GDRDMA")
  bool gdr_pci = false;   // "GDRDMA(PCI)": GPUDirect RDMA through PCIe rather than C2C
  bool read = false;      // P2P read mode ("/read")
  bool copy_engine = false;  // "/CE": copies by the copy engine
  std::string text;       // as NCCL printed it
};

// nullopt for text that names no transport NCCL prints.
std::optional<Transport> parse_via(std::string_view via);
// The transport as one token without spaces: "P2P/CUMEM", "P2P/indirect", "SHM", "NET/IB",
// "NET/IB/GDRDMA", "NET/IB/GDRDMA(PCI)", "NET/IB/GDRDMA/PXN", "NET/AWS_Libfabric/GDRDMA", "COLLNET/SHARP".
std::string token(const Transport& t);

enum class Side { none, send, receive };

// "Channel 03/0 : 0[0] -> 8[0] [send] via ...": one direction of one channel.
struct Connection {
  int channel = -1;
  int from = -1;  // ranks in the communicator
  int to = -1;    // -1 for CollNet lines, which name one rank
  Side side = Side::none;
  Transport transport;
};

enum class CommStage { start, complete, info };

// A line that names a communicator and this process's rank in it.
struct CommLine {
  CommStage stage = CommStage::info;
  std::string comm;     // NCCL's pointer, "0x55d4..." (this process only)
  std::string comm_id;  // "0x9d4c..." (the same on every rank of the communicator); "" when not given
  int rank = -1;
  int nranks = -1;
  int nnodes = -1;  // NCCL's nodes: with MNNVL 1, its NVLink cliques rather than hosts
  int mnnvl = -1;   // "MNNVL 1": the ranks share a multi-node NVLink clique; -1 when the line does not say
  int cuda_device = -1;
  std::string bus_id;
};

// What NVML told NCCL about the NVLink fabric of one GPU (nvmlGpuFabricInfo_v2_t, printed by src/init.cc
// fillInfo; see fixtures/nccl-log/README.md for the sources). Each part is absent when the line lacks
// it (src/mnnvl.cc's line, an NCCL older than the field): unknown, which is not the same as healthy.
struct FabricHealth {
  // NVML_GPU_FABRIC_STATE_*: 0 not supported, 1 not started, 2 in progress, 3 completed. NCCL prints
  // the line only when the state is not 0, and turns MNNVL off unless every rank is at 3 (src/mnnvl.cc).
  std::optional<int> state;
  // NVML_GPU_FABRIC_HEALTH_MASK_*: fields of two or four bits, not one bit per fault (decoded by the report).
  std::optional<std::uint32_t> health_mask;
  // NCCL's own reading of the mask's degraded-bandwidth field: "true", "false", "not-supported", "unknown".
  std::string degraded_bw;  // "" when the line does not say
  [[nodiscard]] bool logged() const { return state || health_mask || !degraded_bw.empty(); }
};

// The NVLink clique of the writer's GPU in the communicator it is setting up
// (the line names neither: it is the process's latest one). NCCL puts two
// GPUs in one multi-node NVLink domain when their cluster UUID and clique id
// match (src/mnnvl.cc), so the pair is what tells two racks apart.
struct CliqueLine {
  std::string cluster_uuid;  // "5a1c.93e0" as NCCL prints it; "" on the src/mnnvl.cc line, which omits it
  std::string clique_id;     // hex without "0x", lower case, no leading zeros: "a" for "0xa" and "a" alike
  int clique_size = -1;      // src/mnnvl.cc only: ranks of the communicator in this clique
  FabricHealth health;       // src/init.cc's line only
};

// "24 coll channels, 24 collnet channels, 16 nvls channels, ...": the NVLS
// count (the collnet count only repeats the coll count in NCCL 2.19-2.28).
struct ChannelCounts {
  int nvls = -1;
};

// NCCL_DEBUG_SUBSYS=TUNING: the algorithm and protocol of one collective call.
struct Tuning {
  std::string function;  // "AllReduce"
  std::uint64_t bytes = 0;
  std::string algorithm;  // "Ring", "Tree", "NVLS", "CollNetDirect", "PAT"... as NCCL names them
  std::string protocol;   // "LL", "LL128", "Simple"
  std::string comm;       // pointer when the line names it
};

struct Line {
  bool nccl = false;  // an NCCL debug line (any level)
  std::string level;  // "INFO", "WARN", "TRACE"...
  Writer writer;
  std::optional<std::string> version;
  std::optional<std::string> network;
  std::optional<CommLine> comm;
  std::optional<CliqueLine> clique;
  std::optional<Connection> connection;
  std::optional<ChannelCounts> channels;
  std::optional<Tuning> tuning;
  std::vector<std::string> path_types;  // Pattern's "type NVL/PIX": {"NVL", "PIX"}
  bool nvls_support = false;            // "NVLS multicast support is available"
};

// Every line parses; one that is not NCCL's has nccl == false (a version
// line counts wherever it appears).
Line parse_line(std::string_view line);

// Splits text into lines (without their '\n' or '\r').
std::vector<std::string_view> lines_of(std::string_view text);

}  // namespace fb::nccl_log
