#include "html_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fb::report::html {
namespace {

std::string escape(std::string_view s, bool quotes) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += quotes ? "&quot;" : "\""; break;
      case '\'': out += quotes ? "&#39;" : "'"; break;
      default:
        // Control characters other than tab and newline have no place in a page.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string text(std::string_view s) { return escape(s, false); }
std::string attr(std::string_view s) { return escape(s, true); }

std::string num(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::abs(v);
  if (a == 0) return "0";
  if (a >= 1000 && a < 1e6) return fmt::format("{:.0f}", v);
  if (a >= 1e-3 && a < 1000) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2e}", v);
}

std::string exact(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string("null"); }

std::string pct(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

}  // namespace fb::report::html
