// One field list per record line drives both directions: each key is spelled
// once, with the member it holds and how it is read and written, so a key
// cannot be written under one name and read under another. Internal to core
// (record_lines.cpp).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fabricbench/core/json_value.hpp"

namespace fb::record_fields {

using json = nlohmann::ordered_json;

// Reads the keys of one line, naming its kind in every error.
class Reader {
 public:
  Reader(const json& j, const char* kind) : j_(j), kind_(kind) {
    if (!j.is_object()) throw std::runtime_error(fmt::format("{} line is not a JSON object", kind));
  }

  // A value of exactly the type and range the schema says. The JSON library's
  // own get<int>() casts 1e300 to int (undefined behaviour) and -5 to a huge
  // uint64 (silently): found by tests/fuzz/record_fuzz.cpp.
  template <typename T>
  T as(const json& v, const char* key) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) throw wrong(key, v);
      return v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      using limits = std::numeric_limits<T>;
      if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(limits::max())) throw wrong(key, v);
        return static_cast<T>(u);
      }
      if (!v.is_number_integer()) throw wrong(key, v);
      const auto i = v.get<std::int64_t>();  // negative here: unsigned values were taken above
      if (i < static_cast<std::int64_t>(limits::min())) throw wrong(key, v);
      return static_cast<T>(i);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) throw wrong(key, v);
      return v.get<T>();
    } else {
      if (!v.is_string()) throw wrong(key, v);
      return v.get<std::string>();
    }
  }

  // A key every line of the kind has had since it exists.
  template <typename T>
  T need(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) throw std::runtime_error(fmt::format("{} line has no '{}'", kind_, key));
    return as<T>(*it, key);
  }
  // A key older or hand-made lines may lack: `fallback` then.
  template <typename T>
  T take(const char* key, T fallback = T{}) const {
    const auto it = j_.find(key);
    return it == j_.end() ? fallback : as<T>(*it, key);
  }
  // Absent or null: nullopt.
  template <typename T>
  std::optional<T> maybe(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    return as<T>(*it, key);
  }
  template <typename T>
  std::vector<T> list(const char* key) const {
    std::vector<T> out;
    for (const auto& v : array(key)) out.push_back(as<T>(v, key));
    return out;
  }
  // The array at `key` (empty when absent).
  const json& array(const char* key) const {
    static const json empty = json::array();
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return empty;
    if (!it->is_array()) throw std::runtime_error(fmt::format("{} line: '{}' is not an array", kind_, key));
    return *it;
  }
  // The object at `key`, read as a nested line.
  Reader object(const json& v, const char* key) const {
    if (!v.is_object())
      throw std::runtime_error(fmt::format("{} line: '{}' holds something other than objects", kind_, key));
    return Reader(v, kind_);
  }
  // The object at `key`, or nothing when absent or null.
  std::optional<Reader> object_at(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    return object(*it, key);
  }
  JsonValue value(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() ? JsonValue() : JsonValue(*it);
  }
  bool has(const char* key) const { return j_.contains(key); }
  const json& line() const { return j_; }
  const char* kind() const { return kind_; }

 private:
  std::runtime_error wrong(const char* key, const json& v) const {
    return std::runtime_error(fmt::format("{} line: '{}' has the wrong type or range ({})", kind_, key, v.dump()));
  }
  const json& j_;
  const char* kind_;
};

// ---- members reached through a path of member pointers --------------------

template <typename M>
struct MemberOf;
template <typename C, typename T>
struct MemberOf<T C::*> {
  using Owner = C;
  using Type = T;
};

template <typename... Ms>
struct Path {
  std::tuple<Ms...> members;
  template <typename S>
  decltype(auto) of(S& s) const {
    return std::apply([&s](auto... m) -> decltype(auto) { return (s.*....*m); }, members);
  }
};

template <typename M, typename... Ms>
using OwnerOf = typename MemberOf<M>::Owner;
template <typename... Ms>
using LastOf = typename MemberOf<std::tuple_element_t<sizeof...(Ms) - 1, std::tuple<Ms...>>>::Type;

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsPair : std::false_type {};
template <typename A, typename B>
struct IsPair<std::pair<A, B>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

// ---- how a key is read and written ----------------------------------------

enum class Read { need, take };         // need: refused when absent; take: the fallback then
enum class Write { always, when_set };  // when_set: left out at its fallback (unset, empty)

template <typename T>
bool is_unset(const T& v, const T& fallback) {
  if constexpr (std::is_same_v<T, JsonValue>) {
    return v.is_null();
  } else if constexpr (IsOptional<T>::value) {
    return !v.has_value();
  } else {
    return v == fallback;
  }
}

// A scalar, string, list of them, optional of them, or a JSON value carried whole.
template <typename T, typename... Ms>
struct Value {
  const char* key;
  Read read_as;
  Write write_as;
  T fallback;
  Path<Ms...> path;

  template <typename S>
  void write(const S& s, json& j) const {
    const T& v = path.of(s);
    if (write_as == Write::when_set && is_unset(v, fallback)) return;
    if constexpr (std::is_same_v<T, JsonValue>) {
      j[key] = v.is_null() ? fallback.get() : v.get();
    } else if constexpr (IsOptional<T>::value) {
      j[key] = v ? json(*v) : json(nullptr);
    } else {
      j[key] = v;
    }
  }
  template <typename S>
  void read(const Reader& r, S& s) const {
    T& v = path.of(s);
    if constexpr (std::is_same_v<T, JsonValue>) {
      v = r.value(key);
    } else if constexpr (IsOptional<T>::value) {
      using U = typename T::value_type;
      if constexpr (IsVector<U>::value) {
        if (r.has(key)) v = r.list<typename U::value_type>(key);
      } else if constexpr (IsPair<U>::value) {  // [first, second]; anything else is no pair
        static_assert(std::is_same_v<typename U::first_type, typename U::second_type>);
        const auto both = r.list<typename U::first_type>(key);
        if (both.size() == 2) v = U{both[0], both[1]};
      } else {
        v = r.maybe<U>(key);
      }
    } else if constexpr (IsVector<T>::value) {
      v = r.list<typename T::value_type>(key);
    } else {
      v = read_as == Read::need ? r.need<T>(key) : r.take<T>(key, fallback);
    }
  }
};

template <typename M, typename... Ms>
auto need(const char* key, M m, Ms... ms) {
  using T = LastOf<M, Ms...>;
  return Value<T, M, Ms...>{key, Read::need, Write::always, T{}, {{m, ms...}}};
}
template <typename M, typename... Ms>
auto take(const char* key, M m, Ms... ms) {
  using T = LastOf<M, Ms...>;
  return Value<T, M, Ms...>{key, Read::take, Write::always, T{}, {{m, ms...}}};
}
template <typename V, typename M, typename... Ms>
auto take_or(const char* key, V fallback, M m, Ms... ms) {
  using T = LastOf<M, Ms...>;
  return Value<T, M, Ms...>{key, Read::take, Write::always, T(fallback), {{m, ms...}}};
}
// Written only when set (not at its default, not empty, not nullopt); read with the default.
template <typename M, typename... Ms>
auto when_set(const char* key, M m, Ms... ms) {
  using T = LastOf<M, Ms...>;
  return Value<T, M, Ms...>{key, Read::take, Write::when_set, T{}, {{m, ms...}}};
}
template <typename V, typename M, typename... Ms>
auto when_set_or(const char* key, V fallback, M m, Ms... ms) {
  using T = LastOf<M, Ms...>;
  return Value<T, M, Ms...>{key, Read::take, Write::when_set, T(fallback), {{m, ms...}}};
}

// Two keys that come together (a confidence interval's two ends, a pair of
// peers): both written when either is set; a line with one needs the other.
template <typename A, typename B>
struct Together {
  A a;
  B b;
  template <typename S>
  void write(const S& s, json& j) const {
    if (is_unset(a.path.of(s), a.fallback) && is_unset(b.path.of(s), b.fallback)) return;
    j[a.key] = a.path.of(s);
    j[b.key] = b.path.of(s);
  }
  template <typename S>
  void read(const Reader& r, S& s) const {
    if (!r.has(a.key) && !r.has(b.key)) return;
    a.path.of(s) = r.need<std::remove_cvref_t<decltype(a.path.of(s))>>(a.key);
    b.path.of(s) = r.need<std::remove_cvref_t<decltype(b.path.of(s))>>(b.key);
  }
};
template <typename A, typename B>
Together<A, B> together(A a, B b) {
  return {a, b};
}

// A value written from others and not read back (a share and its complement).
template <typename S, typename F>
struct Derived {
  const char* key;
  F of;
  void write(const S& s, json& j) const { j[key] = of(s); }
  void read(const Reader&, S&) const {}
};
template <typename S, typename F>
Derived<S, F> derived(const char* key, F of) {
  return {key, of};
}

// The members of one struct, in the order a line holds them. A field list
// may hold another (a base struct's members among a derived one's).
template <typename... Fs>
struct Fields {
  std::tuple<Fs...> fields;
  template <typename S>
  void write(const S& s, json& j) const {
    std::apply([&](const auto&... f) { (f.write(s, j), ...); }, fields);
  }
  template <typename S>
  void read(const Reader& r, S& s) const {
    std::apply([&](const auto&... f) { (f.read(r, s), ...); }, fields);
  }
  template <typename S>
  json object(const S& s) const {
    json j = json::object();
    write(s, j);
    return j;
  }
  template <typename S>
  S from(const Reader& r) const {
    S s{};
    read(r, s);
    return s;
  }
  // Every key, in order.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    std::apply([&](const auto&... f) { (add_keys(f, out), ...); }, fields);
    return out;
  }

 private:
  template <typename F>
  static void add_keys(const F& f, std::vector<std::string>& out) {
    if constexpr (requires { f.key; }) {
      out.push_back(f.key);
    } else if constexpr (requires { f.keys(); }) {
      for (auto& k : f.keys()) out.push_back(std::move(k));
    } else {
      out.push_back(f.a.key);
      out.push_back(f.b.key);
    }
  }
};
template <typename... Fs>
Fields<Fs...> fields(Fs... fs) {
  return {{fs...}};
}

// A nested object, or a list of them, whose members have their own field
// list: a struct U, std::optional<U> (absent or null when unset, per
// `write_as`), std::vector<U>, or std::optional<std::vector<U>>.
template <typename T, typename Sub, typename... Ms>
struct Object {
  const char* key;
  Write write_as;
  Sub sub;
  Path<Ms...> path;
  T fallback{};

  template <typename S>
  void write(const S& s, json& j) const {
    const T& v = path.of(s);
    if constexpr (IsOptional<T>::value) {
      if (!v) {
        if (write_as == Write::always) j[key] = nullptr;
        return;
      }
      j[key] = one(*v);
    } else {
      if (write_as == Write::when_set && is_empty(v)) return;
      j[key] = one(v);
    }
  }
  template <typename S>
  void read(const Reader& r, S& s) const {
    T& v = path.of(s);
    if constexpr (IsOptional<T>::value) {
      using U = typename T::value_type;
      if (!r.has(key) || r.line().at(key).is_null()) return;
      v.emplace();
      *v = take_one<U>(r);
    } else {
      v = take_one<T>(r);
    }
  }

 private:
  template <typename U>
  static bool is_empty(const U& v) {
    if constexpr (IsVector<U>::value)
      return v.empty();
    else
      return false;
  }
  template <typename U>
  json one(const U& v) const {
    if constexpr (IsVector<U>::value) {
      json out = json::array();
      for (const auto& item : v) out.push_back(sub.object(item));
      return out;
    } else {
      return sub.object(v);
    }
  }
  template <typename U>
  U take_one(const Reader& r) const {
    if constexpr (IsVector<U>::value) {
      U out;
      for (const auto& item : r.array(key))
        out.push_back(sub.template from<typename U::value_type>(r.object(item, key)));
      return out;
    } else {
      const auto inner = r.object_at(key);
      return inner ? sub.template from<U>(*inner) : U{};
    }
  }
};

template <typename Sub, typename M, typename... Ms>
auto object(const char* key, Sub sub, M m, Ms... ms) {
  return Object<LastOf<M, Ms...>, Sub, M, Ms...>{key, Write::always, sub, {{m, ms...}}};
}
template <typename Sub, typename M, typename... Ms>
auto object_when_set(const char* key, Sub sub, M m, Ms... ms) {
  return Object<LastOf<M, Ms...>, Sub, M, Ms...>{key, Write::when_set, sub, {{m, ms...}}};
}

}  // namespace fb::record_fields
