// The watchdog's side-channel framing: round trips, streams cut anywhere,
// and malformed input refused for good.
#include "fabricbench/core/watch_wire.hpp"

#include "fabricbench/core/op_desc.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

namespace fb::watch {
namespace {

Message state_message() {
  Message m;
  m.type = MsgType::state;
  m.rank = 4095;
  m.age_s = 0.75;  // a leader heard it this long ago
  m.state.at.step = 123456789012;
  m.state.at.iteration = 17;
  m.state.at.first_iteration = 40;
  m.state.at.phase = Phase::timed;
  m.state.at.op = static_cast<int>(Op::bidir);
  m.state.at.scope = 3;
  m.state.at.bytes = 8ull << 30;
  m.state.at.in_place = true;
  m.state.at.bytes_per_iteration = 64ull << 30;
  m.state.stalled_s = 12.5;
  m.state.limit_s = 68.6;
  return m;
}

TEST(WatchWire, EveryMessageTypeRoundTrips) {
  Message hello;
  hello.type = MsgType::hello;
  hello.token = 0xfeedfacecafebeefull;
  hello.rank = 4095;
  Message fail;
  fail.type = MsgType::fail;
  fail.rank = 7;
  fail.text = "MPI_Allreduce: MPI_ERR_OTHER";
  Message sig;
  sig.type = MsgType::signal;
  sig.rank = 9;
  sig.signal = 15;
  Message lost;
  lost.type = MsgType::lost;
  lost.rank = 12;
  lost.text = "its connection closed";
  Message beat;
  beat.type = MsgType::beat;
  Message bye;
  bye.type = MsgType::bye;
  bye.rank = 3;
  Message leaving;
  leaving.type = MsgType::leaving;
  leaving.rank = 8;
  leaving.text = "rank 0 (vm) has not answered";
  Message stop;
  stop.type = MsgType::stop;
  stop.signal = 15;
  stop.text = "killed";
  Decoder d;
  d.feed(encode(hello) + encode(state_message()) + encode(fail) + encode(sig) + encode(lost) + encode(beat) +
         encode(bye) + encode(leaving) + encode(stop));
  const auto h = d.next();
  ASSERT_TRUE(h);
  EXPECT_EQ(h->token, hello.token);
  EXPECT_EQ(h->rank, 4095);
  const auto s = d.next();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state.at.step, 123456789012);
  EXPECT_EQ(s->state.at.phase, Phase::timed);
  EXPECT_EQ(s->state.at.op, static_cast<int>(Op::bidir));
  EXPECT_EQ(s->state.at.bytes, 8ull << 30);
  EXPECT_TRUE(s->state.at.in_place);
  EXPECT_DOUBLE_EQ(s->state.stalled_s, 12.5);
  EXPECT_DOUBLE_EQ(s->state.limit_s, 68.6);
  EXPECT_EQ(s->rank, 4095);
  EXPECT_DOUBLE_EQ(s->age_s, 0.75);
  const auto f = d.next();
  EXPECT_EQ(f->text, fail.text);
  EXPECT_EQ(f->rank, 7);
  const auto g = d.next();
  EXPECT_EQ(g->signal, 15);
  EXPECT_EQ(g->rank, 9);
  const auto l = d.next();
  EXPECT_EQ(l->type, MsgType::lost);
  EXPECT_EQ(l->rank, 12);
  EXPECT_EQ(l->text, lost.text);
  EXPECT_EQ(d.next()->type, MsgType::beat);
  EXPECT_EQ(d.next()->rank, 3);
  const auto v = d.next();
  EXPECT_EQ(v->type, MsgType::leaving);
  EXPECT_EQ(v->rank, 8);
  EXPECT_EQ(v->text, leaving.text);
  const auto st = d.next();
  EXPECT_EQ(st->type, MsgType::stop);
  EXPECT_EQ(st->signal, 15);  // every rank ends as killed by the signal that ended the run
  EXPECT_EQ(st->text, "killed");
  EXPECT_FALSE(d.next());
  EXPECT_TRUE(d.error().empty());
}

TEST(WatchWire, ByteByByteStreamReassembles) {
  const std::string bytes = encode(state_message()) + encode(state_message());
  Decoder d;
  int got = 0;
  for (char c : bytes) {
    d.feed(std::string_view(&c, 1));
    while (d.next()) ++got;
  }
  EXPECT_EQ(got, 2);
}

TEST(WatchWire, MalformedFramesAreRefusedForGood) {
  const auto refused = [](std::string bytes) {
    Decoder d;
    d.feed(bytes);
    const bool got = d.next().has_value();
    d.feed(encode(state_message()));  // nothing is read after an error
    return !got && !d.error().empty() && !d.next();
  };
  EXPECT_TRUE(refused(std::string("\0\0\0\0", 4)));             // empty frame
  EXPECT_TRUE(refused(std::string("\xff\xff\xff\x7f", 4)));     // far too long
  EXPECT_TRUE(refused(std::string("\x01\0\0\0\x0b", 5)));       // unknown type
  EXPECT_TRUE(refused(std::string("\x02\0\0\0\x03\x00", 6)));   // state of 1 byte
  Message bad = state_message();
  std::string frame = encode(bad);
  frame[4 + 1 + 16 + 3 * 8] = 99;  // phase 99
  EXPECT_TRUE(refused(frame));
  Message negative = state_message();
  negative.rank = -2;
  EXPECT_TRUE(refused(encode(negative)));  // about no rank
  EXPECT_TRUE(refused(std::string("\x01\0\0\0\x04", 5)));  // bye without its rank
  EXPECT_TRUE(refused(std::string("\x02\0\0\0\x08\x00", 6)));  // beat with a payload
  EXPECT_TRUE(refused(std::string("\x05\0\0\0\x06hang", 9)));  // stop without its signal field
  Message no_signal;
  no_signal.type = MsgType::stop;
  no_signal.signal = 65;
  EXPECT_TRUE(refused(encode(no_signal)));  // past the signals there are
  // Counters whose sum, the iteration a report names, is past int64: the
  // fuzzer's find (2^62 + 2^62), which describe() overflowed adding them.
  Message past_count = state_message();
  past_count.state.at.iteration = std::int64_t{1} << 62;
  past_count.state.at.first_iteration = std::int64_t{1} << 62;
  EXPECT_TRUE(refused(encode(past_count)));
  past_count.state.at.iteration = 0;  // "before iteration N + 1"
  past_count.state.at.first_iteration = std::numeric_limits<std::int64_t>::max();
  EXPECT_TRUE(refused(encode(past_count)));
  // A limit past the wire's range of durations (the encoder never sends one).
  std::string long_limit = encode(state_message());
  long_limit[4 + 1 + 16 + 10 * 8 + 6] = 0x10;  // about 4.5e15 us
  EXPECT_TRUE(refused(long_limit));
}

TEST(WatchWire, EveryTypeTravelsOneWay) {
  for (MsgType t : {MsgType::hello, MsgType::state, MsgType::bye, MsgType::fail, MsgType::signal, MsgType::lost,
                    MsgType::leaving})
    EXPECT_TRUE(travels_up(t)) << static_cast<int>(t);
  for (MsgType t : {MsgType::welcome, MsgType::stop, MsgType::beat}) EXPECT_FALSE(travels_up(t)) << static_cast<int>(t);
}

TEST(WatchWire, LongTextIsCutToFitAFrame) {
  Message stop;
  stop.type = MsgType::stop;
  stop.text = std::string(3 * kMaxFrameBytes, 'x');
  Decoder d;
  d.feed(encode(stop));
  const auto m = d.next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text.size(), kMaxFrameBytes - 1 - 8);  // the signal takes 8 of the frame's bytes
  Message fail;
  fail.type = MsgType::fail;
  fail.rank = 1;
  fail.text = stop.text;
  d.feed(encode(fail));
  const auto f = d.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text.size(), kMaxFrameBytes - 1 - 8);  // the rank takes 8 of the frame's bytes
}

// A rank reports whatever op it is in: every row of the op table, the last
// one (added last: today kernel_launch) and the copy paths included, must
// reach rank 0. The decoder once checked against all_ops(), the
// communication ops only, and refused a copying rank's state as malformed,
// which dropped its leader and the node with it. One past the table is no op.
TEST(WatchWire, AStateForEveryOpOfTheTableRoundTrips) {
  const auto round_trip = [](int op) {
    Message m = state_message();
    m.state.at.op = op;
    Decoder d;
    d.feed(encode(m));
    const auto back = d.next();
    EXPECT_TRUE(back) << "op " << op << ": " << d.error();
    return back ? back->state.at.op : -2;
  };
  const Op last = kOpTable.back().op;
  EXPECT_EQ(round_trip(static_cast<int>(last)), static_cast<int>(last)) << name(last);
  for (const OpDesc& d : kOpTable) EXPECT_EQ(round_trip(static_cast<int>(d.op)), static_cast<int>(d.op)) << d.name;
  EXPECT_EQ(round_trip(-1), -1);  // no op yet (set-up)
  Message past = state_message();
  past.state.at.op = static_cast<int>(kOpCount);
  Decoder d;
  d.feed(encode(past));
  EXPECT_FALSE(d.next());
  EXPECT_NE(d.error(), "");
}

// A leader decodes its node's states and encodes them again for rank 0: the
// frame must come out as it went in, microseconds included (truncating
// 0.1 s, decoded as 0.09999999999999999, sent 99,999 us on).
TEST(WatchWire, ADecodedStateEncodesToTheSameFrame) {
  for (double s : {0.1, 0.3, 0.7, 12.5, 68.6, 1e-6, 9.99e8, 1e9, 1e20}) {  // the last sent as the wire's most
    Message m = state_message();
    m.age_s = s;
    m.state.stalled_s = s;
    m.state.limit_s = s * 3;
    const std::string frame = encode(m);
    Decoder d;
    d.feed(frame);
    const auto back = d.next();
    ASSERT_TRUE(back) << d.error();
    EXPECT_EQ(encode(*back), frame) << s << " s";
  }
}

// The fuzz harness's seeds (written by tests/fuzz/watch_wire_seeds.py from
// the format in watch_wire.hpp) are in today's protocol: each stream but the
// bad_* ones decodes whole, and all_types holds every type. A seed that no
// longer decodes would only fuzz the decoder's first error.
TEST(WatchWire, TheFuzzSeedsAreInTodaysProtocol) {
  int seeds = 0;
  for (const auto& e : std::filesystem::directory_iterator(FB_WATCH_WIRE_SEEDS)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad_", 0) == 0) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ASSERT_GT(bytes.size(), 1u) << name;
    Decoder d;
    d.feed(std::string_view(bytes).substr(1));  // the harness's own byte first
    std::size_t decoded = 0;
    std::set<MsgType> types;
    while (auto m = d.next()) {
      decoded += encode(*m).size();
      types.insert(m->type);
    }
    EXPECT_EQ(d.error(), "") << name;
    EXPECT_EQ(decoded, bytes.size() - 1) << name << ": bytes left over after the last whole frame";
    if (name == "all_types") {
      EXPECT_EQ(types.size(), static_cast<std::size_t>(kMsgTypeCount));
    }
    ++seeds;
  }
  EXPECT_GE(seeds, 10);
}

}  // namespace
}  // namespace fb::watch
