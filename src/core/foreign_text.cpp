#include "fabricbench/core/foreign_text.hpp"

#include <fmt/format.h>

namespace fb {

bool LongLines::keep(std::string_view line, std::size_t number) {
  if (line.size() <= kMaxForeignLineBytes) return true;
  if (count_++ == 0) first_ = number;
  return false;
}

std::string LongLines::note(std::string_view source) const {
  if (count_ == 0) return {};
  return fmt::format(
      "{} line{} of {} longer than {} bytes {} not read (the first is line {}): no line this reader "
      "knows is that long",
      count_, count_ == 1 ? "" : "s", source, kMaxForeignLineBytes, count_ == 1 ? "was" : "were", first_);
}

}  // namespace fb
