#include "fabricbench/core/comm.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <cstring>
#include <thread>

#include "comm_internal.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

// Where nothing may throw (destructors, a constructor already failing), a
// failed call is logged with the message check_mpi would have thrown (a
// leaked handle at worst).
void log_if_failed(int rc, const char* call) {
  try {
    check_mpi(rc, call);
  } catch (const RunError& e) {
    spdlog::warn("{}", e.what());
  }
}

}  // namespace

struct Comm::Owned {
  MPI_Comm comm;
  ~Owned() {
    int finalized = 0;
    log_if_failed(MPI_Finalized(&finalized), "MPI_Finalized");
    if (!finalized && comm != MPI_COMM_NULL) log_if_failed(MPI_Comm_free(&comm), "MPI_Comm_free");
  }
};

Comm::Comm(MPI_Comm comm, bool owned) : comm_(comm) {
  // Constructed in place: a temporary Owned would free the communicator on its way out.
  if (owned && comm != MPI_COMM_NULL) owner_.reset(new Owned{comm});
}

Comm Comm::world() { return Comm(MPI_COMM_WORLD, false); }
Comm Comm::adopt(MPI_Comm comm) { return Comm(comm, true); }

int Comm::rank() const {
  int r = -1;
  if (valid()) check_mpi(MPI_Comm_rank(comm_, &r), "MPI_Comm_rank");
  return r;
}

int Comm::size() const {
  int s = 0;
  if (valid()) check_mpi(MPI_Comm_size(comm_, &s), "MPI_Comm_size");
  return s;
}

Comm Comm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  return adopt(out);
}

Comm Comm::split_node() const {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &out), "MPI_Comm_split_type");
  return adopt(out);
}

Comm Comm::dup() const {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm_, &out), "MPI_Comm_dup");
  return adopt(out);
}

void detail::wait_quiet(MPI_Request& request, const char* call) {
  // Spin briefly (control messages usually complete within microseconds),
  // then back off to sleeps so an idle rank leaves the CPU to measuring ones.
  const std::string what = std::string("MPI_Test (waiting for ") + call + ")";
  int done = 0;
  for (int i = 0; i < 200 && !done; ++i) check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what.c_str());
  auto pause = std::chrono::microseconds(20);
  while (!done) {
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::microseconds(1000)) pause *= 2;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what.c_str());
  }
}

void Comm::barrier() const { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

void Comm::barrier_quiet() const {
  MPI_Request req;
  check_mpi(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
  detail::wait_quiet(req, "MPI_Ibarrier");
}

namespace {

void iallreduce(MPI_Comm comm, void* data, int count, MPI_Datatype type, MPI_Op op) {
  MPI_Request req;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm, &req), "MPI_Iallreduce");
  detail::wait_quiet(req, "MPI_Iallreduce");
}

}  // namespace

void Comm::allreduce_max_quiet(std::span<double> v) const {
  iallreduce(comm_, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX);
}
void Comm::allreduce_min_quiet(std::span<double> v) const {
  iallreduce(comm_, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MIN);
}
void Comm::allreduce_sum_quiet(std::span<double> v) const {
  iallreduce(comm_, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM);
}
void Comm::allreduce_max_quiet(std::span<std::int64_t> v) const {
  iallreduce(comm_, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MAX);
}
void Comm::allreduce_min_quiet(std::span<std::int64_t> v) const {
  iallreduce(comm_, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MIN);
}
void Comm::allreduce_sum_quiet(std::span<std::int64_t> v) const {
  iallreduce(comm_, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_SUM);
}

std::pair<double, int> Comm::maxloc_quiet(double value) const {
  struct {
    double value;
    int rank;
  } pair{value, rank()};
  iallreduce(comm_, &pair, 1, MPI_DOUBLE_INT, MPI_MAXLOC);
  return {pair.value, pair.rank};
}

void Comm::bcast_quiet(std::span<std::int64_t> v, int root) const {
  MPI_Request req;
  check_mpi(MPI_Ibcast(v.data(), static_cast<int>(v.size()), MPI_INT64_T, root, comm_, &req), "MPI_Ibcast");
  detail::wait_quiet(req, "MPI_Ibcast");
}

void Comm::bcast_bytes_quiet(std::span<std::byte> bytes, int root) const {
  MPI_Request req;
  check_mpi(MPI_Ibcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, root, comm_, &req), "MPI_Ibcast");
  detail::wait_quiet(req, "MPI_Ibcast");
}

std::string Comm::bcast_string_quiet(const std::string& text, int root) const {
  std::int64_t len = static_cast<std::int64_t>(text.size());
  bcast_quiet({&len, 1}, root);
  std::string out = rank() == root ? text : std::string(static_cast<std::size_t>(len), '\0');
  bcast_bytes_quiet(std::as_writable_bytes(std::span(out)), root);
  return out;
}

void Comm::abort(int exit_code) const { check_mpi(MPI_Abort(comm_, exit_code), "MPI_Abort"); }

std::string agree_on_error(const Comm& comm, const std::string& my_error) {
  double first = my_error.empty() ? comm.size() : comm.rank();
  comm.allreduce_min_quiet({&first, 1});
  const int root = static_cast<int>(first);
  if (root >= comm.size()) return {};
  const std::string text = root == 0 ? my_error : "rank " + std::to_string(root) + " (" + host_name() + "): " + my_error;
  return comm.bcast_string_quiet(text, root);
}

int end_job_after_error(int exit_code) {
  if (world_rank() >= 0) log_if_failed(MPI_Abort(MPI_COMM_WORLD, exit_code), "MPI_Abort");
  return exit_code;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

namespace {

const char* thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "an unknown thread level";
}

int mpi_level(ThreadLevel level) { return level == ThreadLevel::single ? MPI_THREAD_SINGLE : MPI_THREAD_FUNNELED; }

void check_thread_level(int provided, int required) {
  if (provided >= required) return;
  throw RunError(fmt::format(
      "MPI_Init_thread gave {} on rank {} (host {}), and fabricbench needs {} (only its main thread calls MPI, but "
      "this command runs threads of its own): use an MPI library built with thread support; run, check, pairs, step "
      "and gemm with --timeout 0 (no watchdog) need only MPI_THREAD_SINGLE",
      thread_level_name(provided), world_rank(), host_name(), thread_level_name(required)));
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv, ThreadLevel level) : exceptions_at_start_(std::uncaught_exceptions()) {
  const int required = mpi_level(level);
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(argc, argv, required, &provided), "MPI_Init_thread");
  try {
    // Errors come back as codes, which check_mpi turns into messages naming the call.
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_thread_level(provided, required);
  } catch (const RunError&) {
    log_if_failed(MPI_Finalize(), "MPI_Finalize");  // no destructor runs for a constructor that throws
    throw;
  }
}

MpiSession::~MpiSession() {
  if (std::uncaught_exceptions() > exceptions_at_start_) return;
  int finalized = 0;
  log_if_failed(MPI_Finalized(&finalized), "MPI_Finalized");
  if (!finalized) log_if_failed(MPI_Finalize(), "MPI_Finalize");
}

std::string MpiSession::thread_level() {
  int level = MPI_THREAD_SINGLE;
  if (MPI_Query_thread(&level) != MPI_SUCCESS) return "unknown (MPI_Query_thread failed)";
  return thread_level_name(level);
}

std::string MpiSession::library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(buf, &len) != MPI_SUCCESS) return "unknown (MPI_Get_library_version failed)";
  std::string v(buf, static_cast<std::size_t>(len));
  while (!v.empty() && (v.back() == '\n' || v.back() == '\0' || v.back() == ' ')) v.pop_back();
  const auto comma = v.find(',');  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
  return comma == std::string::npos ? v : v.substr(0, comma);
}

}  // namespace fb
