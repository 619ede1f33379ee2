// gtest main for tests that run under mpirun: MPI around the tests, output
// from rank 0 only, and a failure on any rank fails the job.
#include <gtest/gtest.h>
#include <mpi.h>

#include "fabricbench/core/comm.hpp"

int main(int argc, char** argv) {
  fb::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed && rank == 0) std::fprintf(stderr, "a test failed on at least one rank\n");
  return failed;
}
