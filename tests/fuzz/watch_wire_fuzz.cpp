// The watchdog's side-channel decoder on any byte stream, fed in pieces of
// any size: messages it accepts must encode and decode to themselves.
#include "fabricbench/core/watch_wire.hpp"
#include "fuzz_input.hpp"

namespace {

void same(const fb::watch::Message& a, const fb::watch::Message& b) {
  if (a.type != b.type || a.token != b.token || a.rank != b.rank || a.text != b.text || a.signal != b.signal ||
      a.state.at.step != b.state.at.step || a.state.at.iteration != b.state.at.iteration ||
      a.state.at.phase != b.state.at.phase || a.state.at.op != b.state.at.op || a.state.at.bytes != b.state.at.bytes)
    fb::fuzz::broken("a decoded message does not survive encode and decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fb::fuzz::Input in(data, size);
  const std::size_t piece = 1 + in.byte() % 64;
  const std::string_view stream = in.remaining();
  fb::watch::Decoder d;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    d.feed(stream.substr(at, piece));
    while (auto m = d.next()) {
      fb::watch::Decoder again;
      again.feed(fb::watch::encode(*m));
      const auto back = again.next();
      if (!back) fb::fuzz::broken("an accepted message does not decode after encoding");
      same(*m, *back);
    }
  }
  return 0;
}
