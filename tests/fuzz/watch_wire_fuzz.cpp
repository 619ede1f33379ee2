// The watchdog's side channel as its receivers meet it (watch_wire.hpp,
// src/core/watchdog/hub.hpp): any byte stream, as a child sends it up to
// its parent or a parent down to a child.
//
// Input: one byte, then the stream. The byte's low 6 bits: the stream is
// fed to a decoder in pieces of 1 + that many bytes; bit 6: the parent is
// node 1's leader (rank 4) instead of rank 0; bit 7: the sender hangs up
// after the stream. The job: 16 ranks on 4 nodes of 4, token kToken.
//
// The decoder: pieces do not matter (the same messages and the same error
// as in one piece); nothing is decoded after an error; what it accepts
// names only what exists (ranks, phases, ops, scopes: describe() words it)
// and decodes again, field for field, after encoding.
// A real hub on a local socket, the stream sent by one connection: it
// passes on only up messages, after a hello with the token for one of its
// children, about ranks that child speaks for; a connection that sends a
// malformed frame or hangs up is gone at once, not at the hello timeout.
// On rank 0, what it passes on drives the judge (judge.hpp), whose verdict
// at any time becomes a record line that reads back.
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/watch_report.hpp"
#include "fabricbench/core/watch_wire.hpp"
#include "fuzz_input.hpp"
#include "hub.hpp"
#include "judge.hpp"
#include "tree.hpp"

namespace fb::watch {
namespace {

using fb::fuzz::broken;

constexpr std::uint64_t kToken = 0xfeedface;  // the seeds' hellos carry it
constexpr int kLeader = 4;                    // node 1's leader
// The hub part reads this much of the stream: it fits a local socket's
// buffer, so the sender writes it all before the hub reads.
constexpr std::size_t kHubBytes = 64 * 1024;

const Tree& job() {
  static const Tree tree = [] {
    std::vector<int> rank_node(16);
    for (int r = 0; r < 16; ++r) rank_node[static_cast<std::size_t>(r)] = r / 4;
    return Tree(rank_node, {"node-a", "node-b", "node-c", "node-d"});
  }();
  return tree;
}

void same(const Message& a, const Message& b, const char* what) {
  const ProgressSnapshot& x = a.state.at;
  const ProgressSnapshot& y = b.state.at;
  if (a.type != b.type || a.token != b.token || a.rank != b.rank || a.text != b.text || a.signal != b.signal ||
      a.age_s != b.age_s || a.state.stalled_s != b.state.stalled_s || a.state.limit_s != b.state.limit_s ||
      x.step != y.step || x.iteration != y.iteration || x.first_iteration != y.first_iteration ||
      x.phase != y.phase || x.op != y.op || x.scope != y.scope || x.bytes != y.bytes || x.in_place != y.in_place ||
      x.bytes_per_iteration != y.bytes_per_iteration)
    broken(what);
}

struct Decoded {
  std::vector<Message> messages;
  std::string error;
};

Decoded decode(std::string_view stream, std::size_t piece) {
  Decoded out;
  Decoder d;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    d.feed(stream.substr(at, piece));
    while (auto m = d.next()) out.messages.push_back(*m);
  }
  out.error = d.error();
  if (!out.error.empty()) {
    Message beat;
    beat.type = MsgType::beat;
    d.feed(encode(beat));  // well-formed, yet nothing is read after an error
    if (d.next()) broken("a decoder read on after a malformed frame");
  }
  return out;
}

void check_fields(const Message& m) {
  if (travels_up(m.type) && m.rank < 0) broken("an up message about no rank");
  if (m.type != MsgType::state) return;
  const ProgressSnapshot& a = m.state.at;
  // By the names' own tables, not the decoder's bounds.
  if (name(a.phase) == "unknown" || a.op < -1 || a.scope < -1 || (a.op >= 0 && name(static_cast<Op>(a.op)) == "?") ||
      (a.scope >= 0 && name(static_cast<Scope>(a.scope)) == "?"))
    broken("a state naming a phase, op or scope that does not exist");
  if (describe(a).empty()) broken("a state that cannot be worded");
}

void check_decoder(std::string_view stream, std::size_t piece) {
  const Decoded whole = decode(stream, stream.size() + 1);
  const Decoded cut = decode(stream, piece);
  if (whole.error != cut.error || whole.messages.size() != cut.messages.size())
    broken("a stream decodes differently in pieces");
  for (std::size_t i = 0; i < whole.messages.size(); ++i) {
    const Message& m = whole.messages[i];
    same(m, cut.messages[i], "a stream decodes differently in pieces");
    check_fields(m);
    const std::string frame = encode(m);
    if (frame.size() > 4 + kMaxFrameBytes) broken("an encoded frame beyond the limit");
    Decoder again;
    again.feed(frame);
    const auto back = again.next();
    if (!back) broken("an accepted message does not decode after encoding");
    same(m, *back, "a decoded message does not survive encode and decode");
  }
}

// ---- a hub fed by one connection ----

// Rank 0's side (as monitor.cpp: the judge), or a leader's (only the hub's rules).
class Parent : public Hub::Events {
 public:
  Parent(int me, double now) : me_(me), judge_(job(), TimeoutPolicy{5}, now) {}

  void joined(int child) override {
    if (joined_ >= 0) broken("one connection joined twice");
    joined_ = child;
  }
  void message(int child, const Message& m, double now) override {
    if (child != joined_ || !travels_up(m.type) || m.type == MsgType::hello || !job().speaks_for(child, m.rank))
      broken("a hub passed on a message its child may not send");
    if (me_ == 0) judge_.message(m, now);
  }
  void gone(int child, const std::string& why, double now) override {
    if (child != joined_ || why.empty()) broken("a hub lost a child that had not joined, or without saying why");
    if (me_ == 0) judge_.child_gone(child, why, now);
  }

  int joined() const { return joined_; }
  // Its verdict now and once every rank fell silent: a record line that reads back.
  void judge(double now) {
    for (double t : {now, now + 100}) {
      judge_.check_silence(t);
      const auto end = judge_.verdict(t);
      if (!end) continue;
      if (end->status != "hang" && end->status != "rank_lost" && end->status != "error" && end->status != "killed")
        broken("a verdict of no known kind");
      if (end->message.empty() || end->exit_code <= 0) broken("a verdict that says nothing");
      const nlohmann::ordered_json line = {{"type", "summary"}, {"status", end->status}, {"report", end->report.get()}};
      // As RecordWriter writes it (a text cut mid-character is replaced, not thrown on).
      const std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      if (!nlohmann::json::accept(text)) broken("a verdict whose record line does not read back");
    }
  }

 private:
  int me_;
  int joined_ = -1;
  Judge judge_;
};

int connect_to(const std::string& name) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path + 1, name.data(), std::min(name.size(), sizeof(sa.sun_path) - 2));
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&sa), len) != 0) {
    std::perror("fuzz_watch_wire: connecting to the hub");
    std::abort();  // the harness's own set-up, not a finding
  }
  return fd;
}

void check_hub(std::string_view stream, bool leader, bool hang_up) {
  static int serial = 0;
  const std::string name = fmt::format("fabricbench-fuzz-{}-{}", ::getpid(), ++serial);
  const int me = leader ? kLeader : 0;
  std::vector<Fd> listeners;
  listeners.push_back(listen_local(name));
  Hub hub(job(), me, kToken, std::move(listeners));
  const int sender = connect_to(name);
  if (::send(sender, stream.data(), stream.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(stream.size()))
    broken("the harness could not send its stream");  // cannot happen below a socket's buffer
  if (hang_up) ::shutdown(sender, SHUT_WR);
  double now = 1000;
  Parent parent(me, now);
  // Accept, read the hello, read the rest, see the hang-up: a few rounds.
  for (int round = 0; round < 8; ++round, now += 0.01) {
    std::vector<pollfd> fds;
    hub.add_fds(fds);
    if (::poll(fds.data(), fds.size(), 0) <= 0) break;
    hub.handle(fds, now, parent);
  }
  ::close(sender);
  const Decoded d = decode(stream, stream.size() + 1);
  const Message* hello = d.messages.empty() ? nullptr : &d.messages[0];
  const bool hello_first = hello && hello->type == MsgType::hello && hello->token == kToken &&
                           hello->rank < job().size() && job().parent(hello->rank) == me;
  if ((parent.joined() >= 0) != hello_first) broken("a hub took a connection without a hello of its child, or refused one");
  if ((!d.error.empty() || hang_up) && hub.connections() != 0)
    broken("a connection that sent a malformed frame or hung up is still held");
  if (me == 0) parent.judge(now);
}

}  // namespace
}  // namespace fb::watch

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fb::fuzz::Input in(data, size);
  const std::uint8_t how = in.byte();
  const std::string_view stream = in.remaining();
  fb::watch::check_decoder(stream, 1 + (how & 63));
  fb::watch::check_hub(stream.substr(0, fb::watch::kHubBytes), (how & 64) != 0, (how & 128) != 0);
  return 0;
}
