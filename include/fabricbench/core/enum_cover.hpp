// Compile-time proof that a table indexed by an enum covers it exactly: entry
// i describes enumerator i, and the value just past the table's end names no
// enumerator. C++20 cannot count an enum's enumerators, but GCC and Clang
// spell a template argument that names an enumerator by its name
// (`fb::Op::gather`) and any other value as a cast (`(fb::Op)22`): that is
// what names_an_enumerator reads. Use it in host .cpp files only (nvcc's
// front end spells template arguments its own way).
#pragma once

#include <cstddef>
#include <string_view>

namespace fb::enum_cover {

#if !defined(__GNUC__) && !defined(__clang__)
#error "enum_cover needs GCC or Clang (__PRETTY_FUNCTION__)"
#endif

template <auto V>
constexpr bool names_an_enumerator() {
  constexpr std::string_view f = __PRETTY_FUNCTION__;
  // "... [with auto V = fb::Op::gather]" (GCC), "... [V = fb::Op::gather]" (Clang).
  constexpr std::size_t eq = f.rfind("V = ");
  static_assert(eq != std::string_view::npos, "unexpected __PRETTY_FUNCTION__ format");
  return f[eq + 4] != '(';
}

// Entry i of `table` has `key(entry) == E(i)`, and E(table.size()) is no enumerator.
template <typename E, auto& Table, typename Key>
constexpr bool covers(Key key) {
  for (std::size_t i = 0; i < Table.size(); ++i)
    if (key(Table[i]) != static_cast<E>(i)) return false;
  return !names_an_enumerator<static_cast<E>(Table.size())>();
}

}  // namespace fb::enum_cover
