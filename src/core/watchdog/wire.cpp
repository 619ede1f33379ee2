#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>

#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/types.hpp"
#include "fabricbench/core/watch_wire.hpp"

namespace fb::watch {
namespace {

constexpr std::size_t kStateFields = 11;

// What follows the type byte, per message type.
enum class Layout { token_rank, token, rank_state, rank, rank_text, text, rank_signal, signal_text, empty };

struct TypeInfo {
  MsgType type;
  Layout layout;
  bool up;
};

constexpr std::array<TypeInfo, kMsgTypeCount> kTypes{{
    {MsgType::hello, Layout::token_rank, true},
    {MsgType::welcome, Layout::token, false},
    {MsgType::state, Layout::rank_state, true},
    {MsgType::bye, Layout::rank, true},
    {MsgType::fail, Layout::rank_text, true},
    {MsgType::stop, Layout::signal_text, false},
    {MsgType::signal, Layout::rank_signal, true},
    {MsgType::beat, Layout::empty, false},
    {MsgType::lost, Layout::rank_text, true},
    {MsgType::leaving, Layout::rank_text, true},
}};
// Every type has its row, in the order of its number: the table is the protocol.
constexpr bool table_covers_every_type() {
  for (std::size_t i = 0; i < kTypes.size(); ++i)
    if (static_cast<std::size_t>(kTypes[i].type) != i + 1) return false;
  return true;
}
static_assert(table_covers_every_type(), "kTypes needs one row per MsgType, in order");

const TypeInfo& info(MsgType type) { return kTypes[static_cast<std::size_t>(type) - 1]; }

// Payload bytes a layout needs exactly; SIZE_MAX where a text of any length follows `fixed_part`.
constexpr std::size_t fixed_part(Layout l) {
  switch (l) {
    case Layout::token_rank:
    case Layout::rank_signal:
      return 16;
    case Layout::token:
    case Layout::rank:
    case Layout::rank_text:
    case Layout::signal_text:
      return 8;
    case Layout::rank_state:
      return 16 + 8 * kStateFields;
    case Layout::text:
    case Layout::empty:
      return 0;
  }
  return 0;
}
constexpr bool has_text(Layout l) { return l == Layout::rank_text || l == Layout::text || l == Layout::signal_text; }
// The layouts that name a rank (after the token in token_rank).
constexpr bool has_rank(Layout l) {
  return l != Layout::token && l != Layout::text && l != Layout::signal_text && l != Layout::empty;
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

// Rounded, not truncated: a decoded 100000 us is 0.09999999999999999 s, which
// truncation re-encoded as 99999 us (a leader forwarding a state lost a
// microsecond per hop; the fuzz harness's round trip caught it).
// Durations travel as 0 to kMaxDurationUs microseconds (about 31.7 years):
// longer ones are sent as the most, and the decoder refuses more, so what
// decodes encodes to the same frame. Below 1e15 the two roundings (to
// seconds, back to microseconds) stay within half a microsecond; a
// decoded 8.75e18 us once re-encoded as the old cap of 1e18 (the fuzzer).
constexpr std::int64_t kMaxDurationUs = 1'000'000'000'000'000;
std::int64_t to_us(double seconds) {
  if (!(seconds > 0)) return 0;
  return seconds * 1e6 >= static_cast<double>(kMaxDurationUs) ? kMaxDurationUs : std::llround(seconds * 1e6);
}
bool duration_in_range(std::int64_t us) { return us >= 0 && us <= kMaxDurationUs; }

std::array<std::uint64_t, kStateFields> state_fields(const StateReport& s) {
  const ProgressSnapshot& a = s.at;
  return {static_cast<std::uint64_t>(a.step),       static_cast<std::uint64_t>(a.iteration),
          static_cast<std::uint64_t>(a.first_iteration), static_cast<std::uint64_t>(a.phase),
          static_cast<std::uint64_t>(static_cast<std::int64_t>(a.op)),
          static_cast<std::uint64_t>(static_cast<std::int64_t>(a.scope)), a.bytes,
          static_cast<std::uint64_t>(a.in_place), a.bytes_per_iteration,
          static_cast<std::uint64_t>(to_us(s.stalled_s)), static_cast<std::uint64_t>(to_us(s.limit_s))};
}

// Fields are checked here so that nothing downstream names an op, scope or
// phase that does not exist.
std::optional<StateReport> parse_state(std::string_view p) {
  std::array<std::int64_t, kStateFields> f{};
  for (std::size_t i = 0; i < kStateFields; ++i) f[i] = static_cast<std::int64_t>(get_u64(p, 8 * i));
  // Every enumerator of fb::Op (the cover-checked table's size), copy ops
  // and kernel_launch included: all_ops() lists the communication ops only,
  // and a state naming a copy op refused here dropped its rank's leader.
  constexpr auto ops = static_cast<std::int64_t>(kOpCount);
  const auto scopes = static_cast<std::int64_t>(all_scopes().size());
  if (f[0] < 0 || f[1] < 0 || f[2] < 0 || f[3] < 0 || f[3] >= kPhaseCount || f[4] < -1 || f[4] >= ops ||
      f[5] < -1 || f[5] >= scopes || (f[7] != 0 && f[7] != 1) || !duration_in_range(f[9]) || !duration_in_range(f[10]) ||
      f[1] >= std::numeric_limits<std::int64_t>::max() - f[2])  // a report names their sum, or the one after
    return std::nullopt;
  StateReport s;
  s.at.step = f[0];
  s.at.iteration = f[1];
  s.at.first_iteration = f[2];
  s.at.phase = static_cast<Phase>(f[3]);
  s.at.op = static_cast<int>(f[4]);
  s.at.scope = static_cast<int>(f[5]);
  s.at.bytes = static_cast<std::uint64_t>(f[6]);
  s.at.in_place = f[7] == 1;
  s.at.bytes_per_iteration = static_cast<std::uint64_t>(f[8]);
  s.stalled_s = static_cast<double>(f[9]) * 1e-6;
  s.limit_s = static_cast<double>(f[10]) * 1e-6;
  return s;
}

std::uint64_t rank_field(int rank) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(rank)); }

}  // namespace

bool travels_up(MsgType type) { return info(type).up; }

std::string encode(const Message& m) {
  std::string body(1, static_cast<char>(m.type));
  const Layout layout = info(m.type).layout;
  switch (layout) {
    case Layout::token_rank:
      put_u64(body, m.token);
      put_u64(body, rank_field(m.rank));
      break;
    case Layout::token:
      put_u64(body, m.token);
      break;
    case Layout::rank_state:
      put_u64(body, rank_field(m.rank));
      put_u64(body, static_cast<std::uint64_t>(to_us(m.age_s)));
      for (std::uint64_t v : state_fields(m.state)) put_u64(body, v);
      break;
    case Layout::rank:
    case Layout::rank_text:
      put_u64(body, rank_field(m.rank));
      break;
    case Layout::rank_signal:
      put_u64(body, rank_field(m.rank));
      put_u64(body, static_cast<std::uint64_t>(m.signal));
      break;
    case Layout::signal_text:
      put_u64(body, static_cast<std::uint64_t>(m.signal));
      break;
    case Layout::text:
    case Layout::empty:
      break;
  }
  if (has_text(layout)) body += m.text.substr(0, kMaxFrameBytes - body.size());
  std::string frame;
  const auto n = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return frame + body;
}

void Decoder::feed(std::string_view bytes) {
  if (!error_.empty()) return;
  // Drop what was consumed before growing: a long-lived connection's buffer
  // holds at most one partial frame plus what this call adds.
  buffer_.erase(0, offset_);
  offset_ = 0;
  buffer_.append(bytes);
}

std::optional<Message> Decoder::fail(std::string why) {
  error_ = std::move(why);
  buffer_.clear();
  offset_ = 0;
  return std::nullopt;
}

std::optional<Message> Decoder::next() {
  if (!error_.empty()) return std::nullopt;
  const std::string_view in = std::string_view(buffer_).substr(offset_);
  if (in.size() < 4) return std::nullopt;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  if (n == 0 || n > kMaxFrameBytes) return fail(fmt::format("frame of {} bytes (1 to {} allowed)", n, kMaxFrameBytes));
  if (in.size() < 4 + static_cast<std::size_t>(n)) return std::nullopt;
  const std::string_view body = in.substr(4, n);
  offset_ += 4 + n;
  const auto type = static_cast<unsigned char>(body[0]);
  if (type < 1 || type > kMsgTypeCount) return fail(fmt::format("unknown message type {}", type));
  Message m;
  m.type = static_cast<MsgType>(type);
  const Layout layout = info(m.type).layout;
  const std::string_view p = body.substr(1);
  const std::size_t want = fixed_part(layout);
  if (has_text(layout) ? p.size() < want : p.size() != want)
    return fail(fmt::format("message type {} with {} bytes of payload ({}{} expected)", type, p.size(), want,
                            has_text(layout) ? " or more" : ""));
  if (has_rank(layout)) {
    const auto rank = static_cast<std::int64_t>(get_u64(p, layout == Layout::token_rank ? 8 : 0));
    if (rank < 0 || rank > INT32_MAX) return fail(fmt::format("message type {} about rank {}", type, rank));
    m.rank = static_cast<int>(rank);
  }
  switch (layout) {
    case Layout::token_rank:
    case Layout::token:
      m.token = get_u64(p, 0);
      break;
    case Layout::rank_state: {
      const auto age_us = static_cast<std::int64_t>(get_u64(p, 8));
      auto s = parse_state(p.substr(16));
      if (!s || !duration_in_range(age_us)) return fail("state message with out-of-range fields");
      m.age_s = static_cast<double>(age_us) * 1e-6;
      m.state = *s;
      break;
    }
    case Layout::rank_signal: {
      const std::uint64_t sig = get_u64(p, 8);
      if (sig < 1 || sig > 64) return fail(fmt::format("signal {}", sig));
      m.signal = static_cast<int>(sig);
      break;
    }
    case Layout::signal_text: {
      const std::uint64_t sig = get_u64(p, 0);
      if (sig > 64) return fail(fmt::format("stop for signal {}", sig));
      m.signal = static_cast<int>(sig);
      break;
    }
    case Layout::rank:
    case Layout::rank_text:
    case Layout::text:
    case Layout::empty:
      break;
  }
  if (has_text(layout)) m.text = std::string(p.substr(want));
  return m;
}

}  // namespace fb::watch
