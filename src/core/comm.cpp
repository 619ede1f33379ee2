#include "fabricbench/core/comm.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "fabricbench/core/errors.hpp"

namespace fb {

struct Comm::Owned {
  MPI_Comm comm;
  ~Owned() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
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
  if (valid()) MPI_Comm_rank(comm_, &r);
  return r;
}

int Comm::size() const {
  int s = 0;
  if (valid()) MPI_Comm_size(comm_, &s);
  return s;
}

Comm Comm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out);
  return adopt(out);
}

Comm Comm::split_node() const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &out);
  return adopt(out);
}

Comm Comm::dup() const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_dup(comm_, &out);
  return adopt(out);
}

void wait_quiet(MPI_Request& request) {
  // Spin briefly (control messages usually complete within microseconds),
  // then back off to sleeps so an idle rank leaves the CPU to measuring ones.
  int done = 0;
  for (int i = 0; i < 200 && !done; ++i) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  auto pause = std::chrono::microseconds(20);
  while (!done) {
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::microseconds(1000)) pause *= 2;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}

void Comm::barrier_quiet() const {
  MPI_Request req;
  MPI_Ibarrier(comm_, &req);
  wait_quiet(req);
}

namespace {

void iallreduce(MPI_Comm comm, void* data, int count, MPI_Datatype type, MPI_Op op) {
  MPI_Request req;
  MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm, &req);
  wait_quiet(req);
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
  MPI_Ibcast(v.data(), static_cast<int>(v.size()), MPI_INT64_T, root, comm_, &req);
  wait_quiet(req);
}

std::string Comm::bcast_string_quiet(const std::string& text, int root) const {
  std::int64_t len = static_cast<std::int64_t>(text.size());
  bcast_quiet({&len, 1}, root);
  std::string out = rank() == root ? text : std::string(static_cast<std::size_t>(len), '\0');
  MPI_Request req;
  MPI_Ibcast(out.data(), static_cast<int>(len), MPI_CHAR, root, comm_, &req);
  wait_quiet(req);
  return out;
}

std::vector<std::string> Comm::allgather_strings(const std::string& text) const {
  const int n = size();
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(n));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_);
  std::vector<int> displs(static_cast<std::size_t>(n));
  int total = 0;
  for (int i = 0; i < n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += lens[static_cast<std::size_t>(i)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm_);
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(i)]),
                             static_cast<std::size_t>(lens[static_cast<std::size_t>(i)])));
  return out;
}

std::string agree_on_error(const Comm& comm, const std::string& my_error) {
  double first = my_error.empty() ? comm.size() : comm.rank();
  comm.allreduce_min_quiet({&first, 1});
  const int root = static_cast<int>(first);
  if (root >= comm.size()) return {};
  const std::string text = root == 0 ? my_error : "rank " + std::to_string(root) + " (" + host_name() + "): " + my_error;
  return comm.bcast_string_quiet(text, root);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  // Errors come back as codes that backends turn into messages naming the call.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string MpiSession::library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string v(buf, static_cast<std::size_t>(len));
  while (!v.empty() && (v.back() == '\n' || v.back() == '\0' || v.back() == ' ')) v.pop_back();
  const auto comma = v.find(',');  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
  return comma == std::string::npos ? v : v.substr(0, comma);
}

}  // namespace fb
