// The bare reference loops: what an OSU- or IMB-style benchmark runs, written
// here from the MPI standard's calls alone (no code from those suites), so
// that fabricbench's figures can be held against them in the same job.
//   pingpong    rank 0: MPI_Send then MPI_Recv; rank 1 the reverse; a message
//               is half a round trip;
//   sendrecv    every rank MPI_Sendrecv to the next rank, from the previous;
//   all_reduce  MPI_Allreduce, float sum;
//   unidir      rank 0 posts `window` MPI_Isend, rank 1 as many MPI_Irecv,
//               MPI_Waitall, then a zero-byte reply (osu_bw's shape).
// Two figures per run: `loop_us`, the whole timed loop over its iterations
// with no clock read inside it (what those suites print, a mean), and
// `median_us`, the median over iterations of the slowest rank's time with one
// clock read per iteration (what fabricbench prints).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace bare {

enum class Loop { pingpong, sendrecv, all_reduce, unidir };

struct Figures {
  double loop_us = 0;
  double median_us = 0;
};

// Messages (or collectives) one iteration counts for.
inline double per_iteration(Loop loop, int window) {
  return loop == Loop::pingpong ? 2.0 : loop == Loop::unidir ? window : 1.0;
}

class Runner {
 public:
  Runner(Loop loop, std::uint64_t bytes, int window = 64)
      : loop_(loop), bytes_(static_cast<int>(bytes)), window_(window), in_(bytes, 1), out_(bytes, 0),
        requests_(static_cast<std::size_t>(window)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  void once() {
    char* in = in_.data();
    char* out = out_.data();
    const MPI_Comm w = MPI_COMM_WORLD;
    switch (loop_) {
      case Loop::pingpong:
        if (rank_ == 0) {
          MPI_Send(in, bytes_, MPI_BYTE, 1, 1, w);
          MPI_Recv(out, bytes_, MPI_BYTE, 1, 1, w, MPI_STATUS_IGNORE);
        } else if (rank_ == 1) {
          MPI_Recv(out, bytes_, MPI_BYTE, 0, 1, w, MPI_STATUS_IGNORE);
          MPI_Send(in, bytes_, MPI_BYTE, 0, 1, w);
        }
        return;
      case Loop::sendrecv:
        MPI_Sendrecv(in, bytes_, MPI_BYTE, (rank_ + 1) % size_, 1, out, bytes_, MPI_BYTE, (rank_ + size_ - 1) % size_,
                     1, w, MPI_STATUS_IGNORE);
        return;
      case Loop::all_reduce:
        MPI_Allreduce(in, out, bytes_ / 4, MPI_FLOAT, MPI_SUM, w);
        return;
      case Loop::unidir:
        if (rank_ > 1) return;
        for (int i = 0; i < window_; ++i) {
          if (rank_ == 0) MPI_Isend(in, bytes_, MPI_BYTE, 1, 1, w, &requests_[static_cast<std::size_t>(i)]);
          else MPI_Irecv(out, bytes_, MPI_BYTE, 0, 1, w, &requests_[static_cast<std::size_t>(i)]);
        }
        MPI_Waitall(window_, requests_.data(), MPI_STATUSES_IGNORE);
        if (rank_ == 0) MPI_Recv(nullptr, 0, MPI_BYTE, 1, 2, w, MPI_STATUS_IGNORE);
        else MPI_Send(nullptr, 0, MPI_BYTE, 0, 2, w);
        return;
    }
  }

  Figures measure(int iters, int warmup) {
    const double per = per_iteration(loop_, window_);
    for (int i = 0; i < warmup; ++i) once();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) once();
    double loop = (MPI_Wtime() - t0) * 1e6 / iters / per;
    MPI_Allreduce(MPI_IN_PLACE, &loop, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    std::vector<double> t(static_cast<std::size_t>(iters));
    MPI_Barrier(MPI_COMM_WORLD);
    double last = MPI_Wtime();
    for (double& x : t) {
      once();
      const double now = MPI_Wtime();
      x = (now - last) * 1e6 / per;
      last = now;
    }
    MPI_Allreduce(MPI_IN_PLACE, t.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const auto mid = t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2);
    std::nth_element(t.begin(), mid, t.end());
    return {loop, *mid};
  }

 private:
  Loop loop_;
  int bytes_;
  int window_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<char> in_;
  std::vector<char> out_;
  std::vector<MPI_Request> requests_;
};

inline bool parse(std::string_view name, Loop& loop) {
  if (name == "pingpong") loop = Loop::pingpong;
  else if (name == "sendrecv") loop = Loop::sendrecv;
  else if (name == "all_reduce") loop = Loop::all_reduce;
  else if (name == "unidir") loop = Loop::unidir;
  else return false;
  return true;
}

}  // namespace bare
