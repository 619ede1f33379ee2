#include "fabricbench/backends/nccl_log/nccl_log_line.hpp"

#include <cctype>
#include <charconv>

namespace fb::nccl_log {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

int to_int(std::string_view s, int fallback = -1) {
  int v = fallback;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() ? v : fallback;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t begin = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > begin) out.push_back(s.substr(begin, i - begin));
  }
  return out;
}

// The word right after `key ` in `s` ("" when absent), commas dropped.
std::string_view value_after(std::string_view s, std::string_view key) {
  const auto w = words(s);
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] != key) continue;
    std::string_view v = w[i + 1];
    while (!v.empty() && v.back() == ',') v.remove_suffix(1);
    return v;
  }
  return {};
}

// "...vm:597:600 [0] " before the level: NCCL's own prefix, after any launcher's.
Writer writer_of(std::string_view prefix) {
  Writer w;
  prefix = trim(prefix);
  if (!prefix.empty() && prefix.back() == ']') {
    const std::size_t open = prefix.rfind('[');
    if (open != std::string_view::npos) {
      w.device = to_int(prefix.substr(open + 1, prefix.size() - open - 2));
      prefix = trim(prefix.substr(0, open));
    }
  }
  const std::size_t space = prefix.find_last_of(" \t");
  const std::string_view last = space == std::string_view::npos ? prefix : prefix.substr(space + 1);
  // host:pid:tid, possibly glued to a launcher tag ("[1,3]<stdout>:host:pid:tid").
  const std::size_t c2 = last.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return w;
  const std::size_t c1 = last.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) return w;
  const std::string_view pid = last.substr(c1 + 1, c2 - c1 - 1);
  if (!all_digits(pid) || !all_digits(last.substr(c2 + 1))) return w;
  std::string_view host = last.substr(0, c1);
  if (const std::size_t c0 = host.rfind(':'); c0 != std::string_view::npos) host = host.substr(c0 + 1);
  w.host = std::string(host);
  w.pid = std::string(pid);
  return w;
}

// "3[3]" or "3[1a000]" or "3": the rank before the bracket.
int rank_of(std::string_view s) { return to_int(s.substr(0, s.find('['))); }

Transport parse_net(std::string_view kind, std::string_view rest, std::string_view text) {
  // rest = "<name>/<dev>[(<proxy>)][/GDRDMA[(PCI)]][/Shared]"; the name may hold spaces and ends at "/<digit>".
  Transport t;
  t.kind = std::string(kind);
  t.text = std::string(text);
  std::size_t cut = std::string_view::npos;
  for (std::size_t i = 0; i + 1 < rest.size(); ++i)
    if (rest[i] == '/' && std::isdigit(static_cast<unsigned char>(rest[i + 1]))) {
      cut = i;
      break;
    }
  t.mechanism = std::string(rest.substr(0, cut));
  if (cut == std::string_view::npos) return t;
  std::string_view tail = rest.substr(cut + 1);
  std::size_t n = 0;
  while (n < tail.size() && std::isdigit(static_cast<unsigned char>(tail[n]))) ++n;
  t.net_device = to_int(tail.substr(0, n));
  tail.remove_prefix(n);
  if (starts_with(tail, "(")) {
    const std::size_t close = tail.find(')');
    t.via_rank = to_int(tail.substr(1, close - 1));
    tail.remove_prefix(close == std::string_view::npos ? tail.size() : close + 1);
  }
  t.gdr = tail.find("/GDRDMA") != std::string_view::npos;
  t.gdr_pci = tail.find("GDRDMA(PCI)") != std::string_view::npos;
  return t;
}

Transport parse_p2p(std::string_view rest, std::string_view text) {
  Transport t;
  t.kind = "P2P";
  t.text = std::string(text);
  t.read = rest.find("/read") != std::string_view::npos;
  t.copy_engine = rest.find("/CE") != std::string_view::npos;
  std::string_view mech = rest.substr(0, rest.find('/'));
  if (starts_with(mech, "direct")) mech = "direct";  // "direct pointer"
  if (starts_with(mech, "common")) mech = "common";  // "common device" (one GPU: NCCL refuses it)
  t.mechanism = std::string(mech);
  if (mech == "indirect" && rest.size() > 9) t.via_rank = rank_of(rest.substr(9));
  return t;
}

void read_connection(std::string_view body, Line& out) {
  // "Channel 03/0 : 0[0] -> 8[0] [send] via X", "Ring 00 : 0 -> 1 via X", "CollNet 00/0 : 3 [send] via X"
  const bool collnet = starts_with(body, "CollNet ") || starts_with(body, "Coll ");
  if (!collnet && !starts_with(body, "Channel ") && !starts_with(body, "Ring ")) return;
  const std::size_t via = body.find(" via ");
  const std::size_t colon = body.find(" : ");
  if (via == std::string_view::npos || colon == std::string_view::npos || colon > via) return;
  auto transport = parse_via(trim(body.substr(via + 5)));
  if (!transport) return;
  Connection c;
  const std::string_view head = trim(body.substr(body.find(' ') + 1, colon - body.find(' ') - 1));
  c.channel = to_int(head.substr(0, head.find('/')));
  const auto w = words(body.substr(colon + 3, via - colon - 3));
  if (w.empty()) return;
  c.from = rank_of(w[0]);
  std::size_t next = 1;
  if (w.size() >= 3 && w[1] == "->") {
    c.to = rank_of(w[2]);
    next = 3;
  }
  if (next < w.size()) c.side = w[next] == "[send]" ? Side::send : w[next] == "[receive]" ? Side::receive : Side::none;
  if (c.from < 0 || (!collnet && c.to < 0)) return;
  c.transport = std::move(*transport);
  out.connection = std::move(c);
}

void read_comm(std::string_view body, Line& out) {
  CommLine c;
  const bool init = starts_with(body, "ncclCommInit") || starts_with(body, "ncclCommSplit");
  const bool info = starts_with(body, "comm 0x") && body.find(" nRanks ") != std::string_view::npos &&
                    body.find(" nNodes ") != std::string_view::npos;
  if (!init && !info) return;
  if (init) {
    if (body.find(" rank ") == std::string_view::npos) return;
    c.stage = body.find("Init COMPLETE") != std::string_view::npos ? CommStage::complete
              : body.find("Init START") != std::string_view::npos ? CommStage::start
                                                                  : CommStage::info;
  }
  c.comm = std::string(value_after(body, "comm"));
  c.comm_id = std::string(value_after(body, "commId"));
  c.rank = to_int(value_after(body, "rank"));
  c.nranks = to_int(value_after(body, init ? "nranks" : "nRanks"));
  c.nnodes = to_int(value_after(body, "nNodes"));
  if (info) c.mnnvl = to_int(value_after(body, "MNNVL"));
  c.cuda_device = to_int(value_after(body, "cudaDev"));
  c.bus_id = std::string(value_after(body, "busId"));
  if (c.comm.empty() || c.rank < 0) return;
  out.comm = std::move(c);
}

// "0x0A" and "a" name the same clique: src/init.cc prints "0x%x", src/mnnvl.cc "%x".
std::string hex_id(std::string_view s) {
  if (starts_with(s, "0x") || starts_with(s, "0X")) s.remove_prefix(2);
  while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "0x1a" -> 26; nullopt for anything that is not hex, so a garbled field stays unknown.
std::optional<std::uint32_t> hex_value(std::string_view s) {
  if (starts_with(s, "0x") || starts_with(s, "0X")) s.remove_prefix(2);
  std::uint32_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// src/init.cc fillInfo's "... state %d healthMask 0x%x degradedBw %s": each field only when present.
FabricHealth read_fabric_health(std::string_view body) {
  FabricHealth h;
  if (const std::string_view state = value_after(body, "state"); all_digits(state)) h.state = to_int(state);
  h.health_mask = hex_value(value_after(body, "healthMask"));
  h.degraded_bw = std::string(value_after(body, "degradedBw"));
  return h;
}

void read_clique(std::string_view body, Line& out) {
  // Both shapes start "MNNVL " and name the clique; the comm line says "MNNVL 1" too but starts "comm 0x".
  if (!starts_with(body, "MNNVL ")) return;
  const std::string_view id = value_after(body, "cliqueId");
  if (id.empty()) return;
  CliqueLine c;
  c.clique_id = hex_id(id);
  c.cluster_uuid = std::string(value_after(body, "UUID"));  // "fabric UUID 5a1c.93e0"
  c.clique_size = to_int(value_after(body, "cliqueSize"));
  c.health = read_fabric_health(body);
  out.clique = std::move(c);
}

void read_counts(std::string_view body, Line& out) {
  // "[comm 0x.., ]24 coll channels, 0 collnet channels, 16 nvls channels, ..."
  if (body.find(" coll channels, ") == std::string_view::npos) return;
  ChannelCounts c;
  const auto w = words(body);
  for (std::size_t i = 1; i + 1 < w.size(); ++i) {
    if (w[i + 1] != "channels," && w[i + 1] != "channels") continue;
    if (w[i] == "nvls") c.nvls = to_int(w[i - 1]);
  }
  out.channels = c;
}

void read_tuning(std::string_view body, Line& out) {
  // "AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}[ comm 0x..]"
  const std::size_t colon = body.find(": ");
  if (colon == std::string_view::npos || body.find(" Bytes -> Algo ") == std::string_view::npos) return;
  Tuning t;
  t.function = std::string(body.substr(0, colon));
  const auto w = words(body.substr(colon + 2));
  if (w.empty()) return;
  std::from_chars(w[0].data(), w[0].data() + w[0].size(), t.bytes);
  t.algorithm = std::string(value_after(body, "Algo"));
  t.protocol = std::string(value_after(body, "proto"));
  t.comm = std::string(value_after(body, "comm"));
  if (t.algorithm.empty()) return;
  out.tuning = std::move(t);
}

void read_pattern(std::string_view body, Line& out) {
  if (!starts_with(body, "Pattern ")) return;
  std::string_view types = value_after(body, "type");
  while (!types.empty()) {
    const std::size_t slash = types.find('/');
    out.path_types.emplace_back(types.substr(0, slash));
    if (slash == std::string_view::npos) break;
    types.remove_prefix(slash + 1);
  }
}

}  // namespace

std::optional<Transport> parse_via(std::string_view via) {
  via = trim(via);
  if (starts_with(via, "P2P/")) return parse_p2p(via.substr(4), via);
  if (starts_with(via, "NET/")) return parse_net("NET", via.substr(4), via);
  if (starts_with(via, "COLLNET/")) return parse_net("COLLNET", via.substr(8), via);
  if (starts_with(via, "SHM") || via == "direct shared memory") {
    Transport t;
    t.kind = "SHM";
    t.mechanism = starts_with(via, "SHM/") ? std::string(via.substr(4)) : "direct/direct";
    t.copy_engine = via.find("CE") != std::string_view::npos;
    t.text = std::string(via);
    return t;
  }
  return std::nullopt;
}

std::string token(const Transport& t) {
  if (t.kind == "P2P") return "P2P/" + t.mechanism;
  if (t.kind == "SHM") return "SHM";
  std::string name = t.mechanism;
  for (char& c : name)
    if (c == ' ') c = '_';
  std::string out = t.kind + "/" + name;
  if (t.gdr) out += t.gdr_pci ? "/GDRDMA(PCI)" : "/GDRDMA";
  if (t.kind == "NET" && t.via_rank >= 0) out += "/PXN";
  return out;
}

Line parse_line(std::string_view line) {
  Line out;
  if (const std::size_t v = line.find("NCCL version "); v != std::string_view::npos) {
    const auto w = words(line.substr(v + 13));
    if (!w.empty()) out.version = std::string(w[0]);
  }
  std::size_t at = std::string_view::npos;
  for (std::size_t from = 0; (from = line.find("NCCL ", from)) != std::string_view::npos; ++from) {
    const std::string_view rest = line.substr(from + 5);
    const std::size_t end = rest.find(' ');
    const std::string_view level = rest.substr(0, end);
    if (level == "INFO" || level == "WARN" || level == "TRACE" || level == "ABORT") {
      out.level = std::string(level);
      at = from;
      break;
    }
  }
  if (at == std::string_view::npos) return out;
  out.nccl = true;
  out.writer = writer_of(line.substr(0, at));
  const std::string_view body = trim(line.substr(at + 5 + out.level.size()));  // a line may end at the level
  if (out.level != "INFO") return out;
  if (starts_with(body, "Using network ")) out.network = std::string(trim(body.substr(14)));
  out.nvls_support = starts_with(body, "NVLS multicast support is available");
  read_connection(body, out);
  read_comm(body, out);
  read_clique(body, out);
  read_counts(body, out);
  read_tuning(body, out);
  read_pattern(body, out);
  return out;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    pos = end + 1;
  }
  return out;
}

}  // namespace fb::nccl_log
