// Text into HTML: escaping, and figures as a person reads them or exactly
// as the record holds them (for data-* attributes a test reads back).
#pragma once

#include <string>
#include <string_view>

namespace fb::report::html {

std::string text(std::string_view s);  // character data: & < > escaped
std::string attr(std::string_view s);  // attribute values: also " and '

// 3 significant digits, no exponent between 0.001 and 1e6: "1.25", "1930", "0.0042".
std::string num(double v);
// The shortest text that reads back as the same double: for data-* attributes.
std::string exact(double v);
// "12.5%" from a fraction.
std::string pct(double fraction);

}  // namespace fb::report::html
