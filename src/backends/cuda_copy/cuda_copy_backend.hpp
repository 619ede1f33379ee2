// The cuda backend: the copy paths inside a node, per rank on its own GPU
// (device-local, host<->device, peer GPUs) and kernel-launch latency, as rows
// of the same engine and record as the collectives.
#pragma once

#include <memory>

#include "fabricbench/core/backend.hpp"

namespace fb {

std::unique_ptr<Backend> make_cuda_copy_backend();

}  // namespace fb
