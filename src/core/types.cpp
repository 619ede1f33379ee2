#include "fabricbench/core/types.hpp"

#include <array>
#include <utility>

#include "fabricbench/core/enum_cover.hpp"

namespace fb {
namespace {

struct DtypeInfo {
  Dtype dtype;
  const char* name;
  std::size_t bytes;
};
constexpr std::array kDtypes{
    DtypeInfo{Dtype::int8, "int8", 1},       DtypeInfo{Dtype::uint8, "uint8", 1},
    DtypeInfo{Dtype::int32, "int32", 4},     DtypeInfo{Dtype::uint32, "uint32", 4},
    DtypeInfo{Dtype::int64, "int64", 8},     DtypeInfo{Dtype::uint64, "uint64", 8},
    DtypeInfo{Dtype::half, "half", 2},       DtypeInfo{Dtype::float32, "float", 4},
    DtypeInfo{Dtype::float64, "double", 8},  DtypeInfo{Dtype::bfloat16, "bfloat16", 2},
    DtypeInfo{Dtype::fp8_e4m3, "f8e4m3", 1}, DtypeInfo{Dtype::fp8_e5m2, "f8e5m2", 1},
};
// The training frameworks' spellings too (workloads say bf16 and fp8_e4m3):
// one vocabulary for flags, workloads and records.
constexpr std::array<std::pair<const char*, Dtype>, 12> kDtypeAliases{{
    {"float32", Dtype::float32},
    {"fp32", Dtype::float32},
    {"float16", Dtype::half},
    {"fp16", Dtype::half},
    {"float64", Dtype::float64},
    {"fp64", Dtype::float64},
    {"bf16", Dtype::bfloat16},
    {"char", Dtype::int8},
    {"fp8_e4m3", Dtype::fp8_e4m3},
    {"fp8_e5m2", Dtype::fp8_e5m2},
    {"e4m3", Dtype::fp8_e4m3},
    {"e5m2", Dtype::fp8_e5m2},
}};

constexpr std::array kRedops{
    std::pair{RedOp::sum, "sum"}, std::pair{RedOp::prod, "prod"}, std::pair{RedOp::max, "max"},
    std::pair{RedOp::min, "min"}, std::pair{RedOp::avg, "avg"},
};

// Names and sizes are looked up by position: a datatype or reduction added to
// the enum without its row here stops the build (dtype_bytes would say 0).
static_assert(enum_cover::covers<Dtype, kDtypes>([](const DtypeInfo& d) { return d.dtype; }),
              "kDtypes: row i must describe Dtype i, one row per enumerator");
static_assert(enum_cover::covers<RedOp, kRedops>([](const auto& r) { return r.first; }),
              "kRedops: row i must describe RedOp i, one row per enumerator");

constexpr std::array kAllDtypes{Dtype::int8,  Dtype::uint8,   Dtype::int32,   Dtype::uint32,
                                Dtype::int64, Dtype::uint64,  Dtype::half,    Dtype::float32,
                                Dtype::float64, Dtype::bfloat16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
constexpr std::array kAllRedops{RedOp::sum, RedOp::prod, RedOp::max, RedOp::min, RedOp::avg};

template <typename Table>
std::string join_names(const Table& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    if constexpr (requires { entry.name; }) {
      out += entry.name;
    } else {
      out += entry.second;
    }
  }
  return out;
}

}  // namespace

std::span<const Dtype> all_dtypes() { return kAllDtypes; }
std::span<const RedOp> all_redops() { return kAllRedops; }

std::string_view name(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}
std::string_view name(RedOp redop) {
  for (const auto& [r, n] : kRedops)
    if (r == redop) return n;
  return "?";
}

std::optional<Dtype> parse_dtype(std::string_view text) {
  for (const auto& d : kDtypes)
    if (text == d.name) return d.dtype;
  for (const auto& [alias, d] : kDtypeAliases)
    if (text == alias) return d;
  return std::nullopt;
}

std::optional<RedOp> parse_redop(std::string_view text) {
  for (const auto& [r, n] : kRedops)
    if (text == n) return r;
  return std::nullopt;
}

std::size_t dtype_bytes(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.bytes;
  return 0;
}

std::string allowed_dtypes() { return join_names(kDtypes); }
std::string allowed_redops() { return join_names(kRedops); }

}  // namespace fb
