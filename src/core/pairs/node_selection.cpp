#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/hostlist.hpp"
#include "fabricbench/core/pairs.hpp"

namespace fb {
namespace {

bool parse_int(std::string_view text, int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= 0;
}

// "3" or "2-5" -> the indices; false when `spec` is neither.
bool parse_range(const std::string& spec, int& first, int& last) {
  const auto dash = spec.find('-');
  if (dash == std::string::npos) return parse_int(spec, first) && parse_int(spec, last);
  return parse_int(std::string_view(spec).substr(0, dash), first) &&
         parse_int(std::string_view(spec).substr(dash + 1), last);
}

std::string known_nodes(const std::vector<std::string>& hosts) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(hosts.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) out += fmt::format("{}{} ({})", i ? ", " : "", hosts[i], i);
  if (shown < hosts.size()) out += fmt::format(", ... {} nodes in all", hosts.size());
  return out;
}

}  // namespace

std::vector<int> select_nodes(const std::vector<std::string>& specs, const std::vector<std::string>& hosts) {
  std::set<int> chosen;
  const int count = static_cast<int>(hosts.size());
  std::vector<std::string> items;  // "gpu[01-02],5-7" -> gpu01, gpu02, 5-7
  for (const auto& list : specs)
    for (auto& item : expand_hostlist(list, "--nodes")) items.push_back(std::move(item));
  for (const auto& spec : items) {
    // A host name wins over a number: host names can be digits.
    const auto host = std::find(hosts.begin(), hosts.end(), spec);
    if (host != hosts.end()) {
      chosen.insert(static_cast<int>(host - hosts.begin()));
      continue;
    }
    int first = 0;
    int last = 0;
    if (!parse_range(spec, first, last))
      throw UsageError(fmt::format("--nodes '{}': no node has that host name; give host names or node indices "
                                   "(ranges like 0-7). The job's nodes: {}",
                                   spec, known_nodes(hosts)));
    if (first > last || last >= count)
      throw UsageError(fmt::format("--nodes '{}': the job has nodes 0-{}: {}", spec, count - 1, known_nodes(hosts)));
    for (int i = first; i <= last; ++i) chosen.insert(i);
  }
  return {chosen.begin(), chosen.end()};
}

}  // namespace fb
