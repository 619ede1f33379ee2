#include "mpi_host.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fabricbench/core/sizes.hpp"
#include "host_memory.hpp"
#include "mpi_op.hpp"
#include "mpi_path.hpp"

namespace fb {
namespace {

class MpiHostGroup final : public BackendGroup {
 public:
  explicit MpiHostGroup(const Comm& comm) : comm_(comm.dup()), path_(mpi_path(comm_)) {}

  void reserve(std::uint64_t in_bytes, std::uint64_t out_bytes) override {
    // In-place variants keep their input in the output buffer: size both for either.
    const std::uint64_t bytes = std::max(in_bytes, out_bytes);
    if (in_.bytes() < bytes) in_ = HostBuffer(bytes);
    if (out_.bytes() < bytes) out_ = HostBuffer(bytes);
  }

  std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
    const std::uint64_t word = dtype_bytes(spec.dtype);
    reserve(spec.layout.in_elems * word, spec.layout.out_elems * word);
    return std::make_unique<MpiOp>(comm_.native(), spec, in_.data(), out_.data());
  }

  std::string path() const override { return path_; }

 private:
  Comm comm_;
  std::string path_;
  HostBuffer in_;
  HostBuffer out_;
};

class MpiHostBackend final : public Backend {
 public:
  std::string_view name() const override { return "mpi"; }
  std::string version() const override { return MpiSession::library_version(); }

  OpSet ops() const override { return kMpiOps; }
  std::string_view elsewhere() const override { return kMpiElsewhere; }
  Support supports(const OpSpec& spec) const override { return mpi_supports(spec, name()); }

  Support fits(std::uint64_t bytes_per_rank, int local_ranks) const override {
    const auto available = available_host_memory();
    if (!available) return Support::yes();  // cannot tell: let the allocation decide
    const auto ranks = static_cast<std::uint64_t>(std::max(local_ranks, 1));
    const std::uint64_t need = bytes_per_rank > UINT64_MAX / ranks ? UINT64_MAX : bytes_per_rank * ranks;
    if (!fits_host_memory(need, *available))
      return Support::no(fmt::format("the sweep needs {} of host memory per rank ({} for the {} ranks of this node) "
                                     "but this node has {} available ({}); lower --maxbytes",
                                     format_bytes(bytes_per_rank), format_bytes(need), local_ranks,
                                     format_bytes(available->bytes), available->source));
    return Support::yes();
  }

  std::unique_ptr<BackendGroup> open(const Comm& comm) override { return std::make_unique<MpiHostGroup>(comm); }
};

}  // namespace

std::unique_ptr<Backend> make_mpi_host_backend() { return std::make_unique<MpiHostBackend>(); }

}  // namespace fb
