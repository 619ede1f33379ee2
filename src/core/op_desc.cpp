#include "fabricbench/core/op_desc.hpp"

#include <array>

#include "fabricbench/core/enum_cover.hpp"

namespace fb {
namespace {

// ---- The table covers the enum exactly (a new enumerator without its row,
// or rows out of order, stop the build here) ---------------------------------

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kOpTable.size(); ++i)
    if (kOpTable[i].op != static_cast<Op>(i)) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kOpTable: row i must describe Op i, in the enum's order");
// The probe itself must tell a named enumerator from any other value, or the next check proves nothing.
static_assert(enum_cover::names_an_enumerator<Op::kernel_launch>() &&
                  !enum_cover::names_an_enumerator<static_cast<Op>(200)>(),
              "enum_cover cannot tell enumerators from other values on this compiler");
static_assert(!enum_cover::names_an_enumerator<static_cast<Op>(kOpTable.size())>(),
              "kOpTable: an enumerator of fb::Op has no row (add it to op_desc.hpp)");

// ---- Rows that contradict themselves ----------------------------------------

constexpr bool rows_consistent() {
  for (const OpDesc& d : kOpTable) {
    if (d.name.empty()) return false;
    if ((d.pair || d.copy) && d.in_place) return false;        // no in-place point-to-point or copy
    if (d.copy && (d.reduces || d.rooted || d.default_sweep)) return false;
    if (d.reduces != (d.expect == ExpectRule::reduced || d.expect == ExpectRule::reduced_at_root ||
                      d.expect == ExpectRule::reduced_block))
      return false;
    if (d.pair && d.layout != LayoutRule::same) return false;  // a pair moves one message
    if (d.directions < 1 || d.directions > 2) return false;
  }
  return true;
}
static_assert(rows_consistent(), "kOpTable: a row contradicts itself (see rows_consistent)");

constexpr bool is_comm(const OpDesc& d) { return !d.copy; }
constexpr bool in_default_sweep(const OpDesc& d) { return d.default_sweep; }
constexpr bool is_copy(const OpDesc& d) { return d.copy; }

template <bool (*Pred)(const OpDesc&)>
constexpr std::size_t count_where() {
  std::size_t n = 0;
  for (const OpDesc& d : kOpTable) n += Pred(d) ? 1 : 0;
  return n;
}

// Table order, filtered: the spans all_ops(), default_ops(), copy_ops() hand out.
template <bool (*Pred)(const OpDesc&)>
constexpr auto ops_where() {
  std::array<Op, count_where<Pred>()> out{};
  std::size_t i = 0;
  for (const OpDesc& d : kOpTable)
    if (Pred(d)) out[i++] = d.op;
  return out;
}

constexpr auto kAllOps = ops_where<is_comm>();
constexpr auto kDefaultOps = ops_where<in_default_sweep>();
constexpr auto kCopyOps = ops_where<is_copy>();
static_assert(kDefaultOps.size() == 6, "a default sweep runs the six collectives");

}  // namespace

std::string OpSet::names() const {
  std::string out;
  for (const OpDesc& d : kOpTable)
    if (has(d.op)) out += std::string(out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

std::span<const Op> all_ops() { return kAllOps; }
std::span<const Op> default_ops() { return kDefaultOps; }
std::span<const Op> copy_ops() { return kCopyOps; }

std::string_view name(Op op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kOpTable.size() ? kOpTable[i].name : "?";
}

std::optional<Op> parse_op(std::string_view text) {
  for (const OpDesc& d : kOpTable) {
    if (text == d.name) return d.op;
    for (std::string_view alias : d.aliases)
      if (!alias.empty() && text == alias) return d.op;
  }
  return std::nullopt;
}

bool is_reduction(Op op) { return op_desc(op).reduces; }
bool has_root(Op op) { return op_desc(op).rooted; }
bool is_pair_op(Op op) { return op_desc(op).pair; }
bool is_copy_op(Op op) { return op_desc(op).copy; }
bool has_in_place(Op op) { return op_desc(op).in_place; }

std::string allowed_ops() {
  std::string out;
  for (const OpDesc& d : kOpTable) out += std::string(out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

}  // namespace fb
