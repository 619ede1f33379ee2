// NCCL backend: one rank per GPU, a communicator per scope group (unique id
// broadcast over MPI), device buffers, event-timed collectives and
// point-to-point, device-side check, and the transport NCCL chose on every row.
#pragma once

#include <memory>

#include "fabricbench/core/backend.hpp"

namespace fb {

std::unique_ptr<Backend> make_nccl_backend();

}  // namespace fb
