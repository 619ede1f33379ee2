// The communicators an NCCL debug log describes, assembled from its lines
// (nccl_log_line.hpp): ranks and where they run, the transport of every
// channel between two ranks, NVLS and CollNet, and the algorithms NCCL
// chose when the log has them. The logs of several processes may be
// concatenated or interleaved (one file per rank, or a launcher's merged
// output): lines are told apart by NCCL's host:pid prefix, and a
// communicator's pieces from different processes are joined by its commId.
//
// A connection line names no communicator, so it belongs to the process's
// latest communicator that fits it (its rank count holds both ranks, and
// this process's rank is the sender, or the receiver on "[receive]" lines).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fabricbench/backends/nccl_log/nccl_log_line.hpp"

namespace fb::nccl_log {

struct RankInfo {
  std::string host;
  std::string pid;
  int device = -1;
  std::string bus_id;
  // The GPU's NVLink clique from its "MNNVL ... cliqueId" lines (nccl_log_line.hpp); "" when not logged.
  std::string cluster_uuid;
  std::string clique_id;
  // The GPU's NVLink fabric state and health from the same src/init.cc line; not logged: unknown.
  FabricHealth fabric_health;
};

// Every channel one transport carries from one rank to another.
struct Link {
  int from = -1;
  int to = -1;
  std::string token;        // token(transport)
  Transport transport;      // the first line seen for it
  std::set<int> channels;
};

struct Communicator {
  std::string id;      // NCCL's commId ("0x9d4c..."), or "unnamed-N" when the log gives none
  int nranks = -1;
  int nnodes = -1;
  // NCCL's MNNVL flag from the "comm 0x.. rank .. MNNVL 1" lines: 1 when any rank said 1, -1 when none said.
  int mnnvl = -1;
  std::map<int, RankInfo> ranks;
  std::map<std::tuple<int, int, std::string>, Link> links;  // by (from, to, token)
  std::set<std::string> versions;
  std::set<std::string> networks;
  std::set<std::string> path_types;  // "NVL", "PIX", ... from the topology search
  int nvls_channels = 0;
  bool nvls_support = false;
  // CollNet lines seen ("CollNet 00/0 : 3 [send] via COLLNET/..."). NCCL's
  // "N collnet channels" count repeats the coll channel count (src/init.cc), so it says nothing.
  bool collnet_connected = false;
  std::map<std::string, std::set<std::string>> algorithms;  // "AllReduce" -> {"Ring/LL128", ...}
  // The host of `rank`, "" when no line of its process is in the log.
  [[nodiscard]] std::string host_of(int rank) const;
};

struct Log {
  std::vector<Communicator> comms;  // in the order they were first seen
  std::size_t nccl_lines = 0;
  std::size_t info_lines = 0;
  std::set<std::string> versions;
  std::set<std::string> hosts;
  std::vector<std::string> warnings;  // NCCL WARN lines (the first few)
};

// Feed text in any number of pieces (a file each), then take the log.
class LogReader {
 public:
  void add(std::string_view text);
  Log finish() const;

 private:
  struct ProcComm {
    std::string ptr;
    int rank = -1;
    std::size_t comm = 0;  // index into comms_
  };
  struct Process {
    std::vector<ProcComm> comms;  // in creation order
    std::string version;          // the last "NCCL version" line of the process
    std::string network;          // the last "Using network" line, for the communicators after it
    std::optional<CliqueLine> clique;  // a clique line before any communicator line: for the next one
  };
  void add_line(const Line& line, std::string_view text);
  void on_comm(Process& p, const Writer& w, const CommLine& c);
  void on_clique(Process& p, const CliqueLine& c);
  std::size_t comm_for(Process& p, const Line& line);
  std::size_t new_comm(std::string id);

  std::map<std::string, Process> processes_;
  std::vector<Communicator> comms_;
  std::map<std::string, std::size_t> by_id_;
  Log totals_;
};

Log read_log(std::string_view text);

}  // namespace fb::nccl_log
