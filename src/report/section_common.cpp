#include <fmt/format.h>

#include <array>

#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

int& id_counter() {
  static thread_local int n = 0;
  return n;
}

}  // namespace

const std::string& colour(std::size_t i) {
  static const std::array<std::string, 7> kPalette{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                   "#E69F00", "#56B4E9", "#000000"};
  return kPalette[i % kPalette.size()];
}

std::string record_prefix(const RecordInput& r, const HtmlInputs& in) {
  return in.records.size() > 1 ? r.label + ": " : std::string();
}

std::string record_identity(const Results& r) {
  const RunHeader& h = r.header;
  std::string hosts;
  for (std::size_t i = 0; i < h.hosts.size() && i < 3; ++i) hosts += (i ? ", " : "") + h.hosts[i];
  if (h.hosts.size() > 3) hosts += fmt::format(" and {} more", h.hosts.size() - 3);
  std::string out = h.command == "import" ? std::string("nccl-tests (imported)") : "fabricbench " + h.command;
  if (!hosts.empty()) out += " on " + hosts;
  if (h.ranks > 0) out += fmt::format(", {} rank{}", h.ranks, h.ranks == 1 ? "" : "s");
  if (h.backend) out += ", " + *h.backend + (h.backend_version && !h.backend_version->empty() ? " " + *h.backend_version : "");
  if (!h.start_time.empty()) out += ", " + h.start_time;
  return out;
}

std::string host_of(const Results& r, int rank) {
  const auto& h = r.header;
  if (rank < 0 || rank >= static_cast<int>(h.rank_node.size())) return {};
  const int node = h.rank_node[static_cast<std::size_t>(rank)];
  return node >= 0 && node < static_cast<int>(h.hosts.size()) ? h.hosts[static_cast<std::size_t>(node)] : "";
}

std::string table(const std::vector<std::string>& heads, const std::vector<Row>& rows, const std::string& cls) {
  // In a box of its own that scrolls sideways on a narrow screen.
  std::string out = cls.empty() ? "<div class=\"scroll\"><table>"
                                : fmt::format("<div class=\"scroll\"><table class=\"{}\">", cls);
  out += "<thead><tr>";
  for (const auto& h : heads) out += "<th>" + html::text(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& r : rows) {
    out += "<tr" + r.attrs + ">";
    for (const auto& c : r.cells) out += "<td>" + c + "</td>";
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string wrap(const std::string& id, const std::string& title, const std::string& body, const std::string& attrs) {
  return fmt::format("<section id=\"{}\"{}><h2>{}</h2>{}</section>\n", id, attrs.empty() ? "" : " " + attrs,
                     html::text(title), body);
}

std::string next_id(const char* prefix) { return fmt::format("{}{}", prefix, ++id_counter()); }

void reset_ids() { id_counter() = 0; }

}  // namespace fb::report::section
