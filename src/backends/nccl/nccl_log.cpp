#include "nccl_log.hpp"

#include <algorithm>
#include <vector>

namespace fb {
namespace {

std::string_view word_after(std::string_view line, std::string_view marker) {
  const std::size_t at = line.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + marker.size());
  const std::size_t end = rest.find_first_of(" \t\r,");
  return rest.substr(0, end);
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t next = text.find(sep, pos);
    parts.push_back(text.substr(pos, next == std::string_view::npos ? text.npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return parts;
}

// "P2P/CUMEM/read" -> "P2P/CUMEM"; "NET/IB/3/GDRDMA" -> "NET/IB/GDRDMA";
// "SHM/direct/direct" -> "SHM"; "NET/Socket/0" -> "NET/Socket".
std::string transport_of(std::string_view via) {
  const auto parts = split(via, '/');
  const std::string_view kind = parts[0];
  if (kind == "P2P" && parts.size() > 1) return "P2P/" + std::string(parts[1]);
  if (kind == "NET" && parts.size() > 1) {
    const bool gdr = std::find(parts.begin(), parts.end(), std::string_view("GDRDMA")) != parts.end();
    return "NET/" + std::string(parts[1]) + (gdr ? "/GDRDMA" : "");
  }
  return std::string(kind);
}

void read_line(std::string_view line, NcclLogFacts& facts) {
  if (const auto v = word_after(line, "NCCL version "); !v.empty()) facts.version = std::string(v);
  if (line.find("Channel ") != std::string_view::npos) {
    if (const auto via = word_after(line, " via "); !via.empty()) facts.transports.insert(transport_of(via));
  }
  if (line.find("Pattern ") != std::string_view::npos) {
    const auto type = word_after(line, "type ");
    if (!type.empty()) facts.intra_types.insert(std::string(type.substr(0, type.find('/'))));
  }
  if (const auto net = word_after(line, "Using network "); !net.empty()) facts.network = std::string(net);
}

int order_of(const std::string& transport) {
  if (transport.rfind("P2P", 0) == 0) return 0;
  if (transport == "SHM") return 1;
  if (transport.rfind("NET", 0) == 0) return 2;
  return 3;
}

// NVL: NVLink; NVB: NVLink through another GPU; C2C: the chip-to-chip link.
// Every other type NCCL prints inside a node (PIX, PXB, PXN, P2C, PHB, SYS) is PCIe.
std::string link_of(const std::set<std::string>& intra_types) {
  if (intra_types.count("NVL") || intra_types.count("NVB")) return "NVLink";
  if (intra_types.count("C2C")) return "C2C";
  for (const char* pcie : {"PIX", "PXB", "PXN", "P2C", "PHB", "SYS"})
    if (intra_types.count(pcie)) return "PCIe";
  return {};
}

}  // namespace

NcclLogFacts parse_nccl_log(std::string_view text) {
  NcclLogFacts facts;
  for (const auto line : split(text, '\n')) read_line(line, facts);
  return facts;
}

std::string describe_nccl_path(const NcclLogFacts& facts, int nranks) {
  std::vector<std::string> tokens(facts.transports.begin(), facts.transports.end());
  if (tokens.empty()) return nranks <= 1 ? "local" : "unknown";
  std::stable_sort(tokens.begin(), tokens.end(),
                   [](const std::string& a, const std::string& b) { return order_of(a) < order_of(b); });
  const std::string link = link_of(facts.intra_types);
  std::string out;
  for (const auto& t : tokens) {
    if (!out.empty()) out += '+';
    out += t;
    if (order_of(t) == 0 && !link.empty()) out += "/" + link;
  }
  return out;
}

std::string pinned_tuning(const char* algo, const char* proto) {
  std::string out;
  for (const auto& [name, value] : {std::pair{"NCCL_ALGO", algo}, std::pair{"NCCL_PROTO", proto}}) {
    if (!value || !*value) continue;
    std::string v(value);
    std::replace(v.begin(), v.end(), ',', ';');
    out += " " + std::string(name) + "=" + v;
  }
  return out;
}

}  // namespace fb
