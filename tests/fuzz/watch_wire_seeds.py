#!/usr/bin/env python3
"""Writes the seeds of the watch_wire fuzz harness (tests/fuzz/corpus/watch_wire/).

Written from the frame format documented in include/fabricbench/core/watch_wire.hpp,
not from the C++ encoder, so a seed that stops decoding shows a change of the
protocol (the unit test WatchWire.TheFuzzSeedsAreInTodaysProtocol says which).
Each seed: one byte for the harness (low 6 bits: piece size - 1; 64: the parent is
node 1's leader, rank 4, instead of rank 0; 128: the sender hangs up after the
stream), then the stream. The harness's job: 16 ranks on 4 nodes of 4, token
0xfeedface. Run it after changing the protocol: python3 tests/fuzz/watch_wire_seeds.py
"""
import os
import struct

TOKEN = 0xFEEDFACE
LEADER = 64
HANG_UP = 128
TYPES = dict(hello=1, welcome=2, state=3, bye=4, fail=5, stop=6, signal=7, beat=8, lost=9, leaving=10)
PHASES = dict(idle=0, setup=1, warmup=2, timed=3, check=4, sync=5, compute=6)
# fb::Op in the enum's order (include/fabricbench/core/types.hpp, the rows of op_desc.hpp).
OPS = dict(all_reduce=0, all_gather=1, gather=6, scatter=7, sendrecv=8, bidir=11, copy_h2d_pinned=14, copy_peer=19,
           kernel_launch=21)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def frame(kind, payload=b""):
    body = bytes([TYPES[kind]]) + payload
    return struct.pack("<I", len(body)) + body


def hello(rank, token=TOKEN):
    return frame("hello", u64(token) + u64(rank))


def welcome():
    return frame("welcome", u64(TOKEN))


def state(rank, age_us=0, step=3, iteration=7, first_iteration=0, phase="timed", op="all_reduce", scope=0,
          nbytes=1 << 20, in_place=0, bytes_per_iteration=2 << 20, stalled_us=100_000, limit_us=5_000_000):
    fields = [step, iteration, first_iteration, PHASES[phase], -1 if op is None else OPS[op], scope, nbytes,
              in_place, bytes_per_iteration, stalled_us, limit_us]
    return frame("state", u64(rank) + u64(age_us) + b"".join(u64(f) for f in fields))


def ranked(kind, rank, text=b""):
    return frame(kind, u64(rank) + text)


def signal(rank, number):
    return frame("signal", u64(rank) + u64(number))


def stop(text, number=0):
    """Rank 0's stop: the signal that ended the run (0: none), then why."""
    return frame("stop", u64(number) + text)


SEEDS = {
    # Every message type once, fed 8 bytes at a time (the hub drops the sender at the welcome).
    "all_types": (7, hello(3) + welcome() + state(3) + ranked("bye", 3) +
                  ranked("fail", 3, b"MPI_Allreduce: MPI_ERR_OTHER") + stop(b"killed", 15) + signal(3, 15) +
                  frame("beat") + ranked("lost", 9, b"its connection closed") +
                  ranked("leaving", 8, b"rank 0 (vm) has not answered")),
    # Leader-forwarded states, one byte at a time, without a hello: the hub never takes them.
    "states_byte_by_byte": (0, state(8, age_us=125_000) + state(9, age_us=250_000) + state(10, age_us=500_000)),
    # A frame of 1 GiB: refused before it is read.
    "bad_length": (16, b"\x00\x00\x00\x40\x03"),
    # Node 1's leader and its ranks, rank 5 behind and past the limit: a hang naming rank 5.
    "leader_hang": (5, hello(4) + state(4, iteration=9, stalled_us=100_000) +
                    state(5, age_us=200_000, iteration=3, stalled_us=6_000_000) +
                    state(6, age_us=200_000, iteration=9) + state(7, age_us=200_000, iteration=9)),
    # A leader loses one of its ranks, then hangs up itself: its whole node is lost.
    "leader_lost_member_hangs_up": (5 | HANG_UP, hello(4) + state(4) + ranked("lost", 6, b"its connection closed")),
    # A rank of rank 0's own node got SIGTERM.
    "member_signal": (15, hello(2) + state(2, phase="sync", op=None, scope=-1) + signal(2, 15)),
    # An error text cut in the middle of a UTF-8 character (frames cut long texts anywhere).
    "member_fail_cut_utf8": (32, hello(1) + state(1, phase="check") +
                             ranked("fail", 1, b"cudaErrorIllegalAddress \xe2\x80")),
    # A leader passes on that a rank of its node ends the job (rank 0's parent silence).
    "leaving_upstream": (3, hello(8) + state(8) + ranked("leaving", 9, b"rank 0 (node-a) has not answered for 7.0 s")),
    # A leader speaking for another node's rank: dropped, its node lost.
    "speaks_for_another_node": (1, hello(4) + state(9)),
    # A copy op of the cuda backend, stalled past its limit behind node 3's leader.
    "copy_op_state": (9, hello(12) + state(12, op="copy_h2d_pinned", iteration=40) +
                      state(13, age_us=100_000, op="copy_h2d_pinned", iteration=2, stalled_us=7_000_000) +
                      state(14, op="kernel_launch", phase="warmup", iteration=40) +
                      state(15, op="scatter", iteration=3)),
    # Not this run's token: never joins.
    "wrong_token": (2, hello(1, token=TOKEN ^ 1) + state(1)),
    # A second hello on a joined connection: dropped.
    "hello_twice": (4, hello(3) + hello(3)),
    # What a child reads from its parent: the hub drops a sender of those at once.
    "down_messages": (6, welcome() + frame("beat") + frame("beat") + stop(b"rank_lost")),
    # Node 1's leader's own hub: one of its ranks reports and finishes.
    "leader_hub_member": (7 | LEADER, hello(5) + state(5, phase="compute", op=None) + ranked("bye", 5)),
    # Node 1's leader's hub, hello of a rank that is not its child, then a hang-up.
    "leader_hub_foreign": (1 | LEADER | HANG_UP, hello(1) + state(1)),
    # Durations of a few microseconds (a state forwarded twice keeps its age) and
    # counters near the top of their range (the iteration a report names is
    # iteration + first_iteration: their sum still fits in int64).
    "ages_and_counters": (63, hello(4) + state(5, age_us=3, stalled_us=7, limit_us=5_000_001) +
                          state(6, step=2**62, iteration=2**61, first_iteration=2**62)),
    # Counters whose sum does not fit: refused (describe() once overflowed adding them).
    "bad_iteration_sum": (63, hello(4) + state(6, step=2**62, iteration=2**62, first_iteration=2**62)),
    # A limit past the wire's range of durations (1e15 us): refused, as the
    # encoder could not send it back unchanged.
    "bad_long_limit": (9, hello(12) + state(12, limit_us=2**62)),
}


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "watch_wire")
    os.makedirs(here, exist_ok=True)
    for name, (how, stream) in SEEDS.items():
        with open(os.path.join(here, name), "wb") as f:
            f.write(bytes([how]) + stream)
    print(f"wrote {len(SEEDS)} seeds to {here}")


if __name__ == "__main__":
    main()
