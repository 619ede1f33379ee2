// The bare reference program: MPI_Init, one of the loops of bare_loop.hpp,
// MPI_Finalize; nothing else, so scripts can run it beside `fabricbench run`
// (and time its start-up as a plain MPI program's).
//   mpirun -np 2 fb_bare_loop pingpong|sendrecv|all_reduce|unidir BYTES ITERS [WARMUP] [WINDOW]
// ITERS 0 runs no loop. Prints, on rank 0: "bare OP BYTES loop_us X median_us Y".
// FB_BARE_THREAD_LEVEL=funneled initialises with MPI_Init_thread(MPI_THREAD_FUNNELED),
// fabricbench's level (its watchdog runs a thread of its own), instead of
// MPI_Init's MPI_THREAD_SINGLE (the suites' level): the library's cost of the
// level alone, with no thread started (bench/scripts/thread-level-vs-osu.sh).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bare_loop.hpp"

int main(int argc, char** argv) {
  const char* level = std::getenv("FB_BARE_THREAD_LEVEL");
  if (level && std::strcmp(level, "funneled") == 0) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
      std::fprintf(stderr, "fb_bare_loop: MPI_Init_thread gave %d, below MPI_THREAD_FUNNELED\n", provided);
      MPI_Finalize();
      return 2;
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  bare::Loop loop{};
  if (argc < 4 || !bare::parse(argv[1], loop)) {
    std::fprintf(stderr, "usage: fb_bare_loop pingpong|sendrecv|all_reduce|unidir BYTES ITERS [WARMUP] [WINDOW]\n");
    MPI_Finalize();
    return 2;
  }
  const std::uint64_t bytes = std::strtoull(argv[2], nullptr, 10);
  const int iters = std::atoi(argv[3]);
  const int warmup = argc > 4 ? std::atoi(argv[4]) : 200;
  const int window = argc > 5 ? std::atoi(argv[5]) : 64;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (iters > 0) {
    bare::Runner runner(loop, bytes, window);
    const bare::Figures f = runner.measure(iters, warmup);
    if (rank == 0)
      std::printf("bare %s %llu loop_us %.4f median_us %.4f\n", argv[1], static_cast<unsigned long long>(bytes),
                  f.loop_us, f.median_us);
  }
  MPI_Finalize();
  return 0;
}
