/* A PMPI fault shim for the `mpi` tests (tests/cli/mpi_faults_test.cpp):
 * LD_PRELOADed into the ranks (mpirun -x LD_PRELOAD=...), it makes one MPI
 * call return an error on one rank, to show that fabricbench checks it and
 * ends the job with a message naming the call and the rank.
 *
 *   FB_MPI_FAULT_CALL      the call that fails, e.g. MPI_Igather (one of those below)
 *   FB_MPI_FAULT_RANK      the world rank it fails on (default 0)
 *   FB_MPI_FAULT_SKIP      how many of that rank's calls of it pass first (default 0)
 *   FB_MPI_FAULT_PROVIDED  MPI_Init_thread then reports this level on every
 *                          rank: single, funneled, serialized or multiple
 *
 * The failing call returns MPI_ERR_OTHER without doing anything, as a call
 * that failed may; every other call goes straight to its PMPI_ twin. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static int fails_now(const char* call) {
  static long seen = 0;
  const char* wanted = getenv("FB_MPI_FAULT_CALL");
  if (!wanted || strcmp(wanted, call) != 0) return 0;
  const char* rank_text = getenv("FB_MPI_FAULT_RANK");
  const char* skip_text = getenv("FB_MPI_FAULT_SKIP");
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != (rank_text ? atoi(rank_text) : 0)) return 0;
  /* Once: the caller is expected to stop; its way out (MPI_Abort) must work. */
  return seen++ == (skip_text ? atol(skip_text) : 0);
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  const char* level = getenv("FB_MPI_FAULT_PROVIDED");
  if (rc != MPI_SUCCESS || !level) return rc;
  if (strcmp(level, "single") == 0) *provided = MPI_THREAD_SINGLE;
  if (strcmp(level, "funneled") == 0) *provided = MPI_THREAD_FUNNELED;
  if (strcmp(level, "serialized") == 0) *provided = MPI_THREAD_SERIALIZED;
  if (strcmp(level, "multiple") == 0) *provided = MPI_THREAD_MULTIPLE;
  return rc;
}

int MPI_Igather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request* req) {
  if (fails_now("MPI_Igather")) return MPI_ERR_OTHER;
  return PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
}

int MPI_Igatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  if (fails_now("MPI_Igatherv")) return MPI_ERR_OTHER;
  return PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
}

int MPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* req) {
  if (fails_now("MPI_Iallreduce")) return MPI_ERR_OTHER;
  return PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req);
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* req) {
  if (fails_now("MPI_Ibcast")) return MPI_ERR_OTHER;
  return PMPI_Ibcast(buf, count, type, root, comm, req);
}

int MPI_Barrier(MPI_Comm comm) {
  if (fails_now("MPI_Barrier")) return MPI_ERR_OTHER;
  return PMPI_Barrier(comm);
}

int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  if (fails_now("MPI_Test")) return MPI_ERR_OTHER;
  return PMPI_Test(req, flag, status);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  if (fails_now("MPI_Comm_split")) return MPI_ERR_OTHER;
  return PMPI_Comm_split(comm, color, key, out);
}
