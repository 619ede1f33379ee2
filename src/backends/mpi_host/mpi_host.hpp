// Host-memory MPI backend: every collective and point-to-point op through the
// MPI library on page-aligned, pre-touched host buffers.
#pragma once

#include <memory>

#include "fabricbench/core/backend.hpp"

namespace fb {

std::unique_ptr<Backend> make_mpi_host_backend();

}  // namespace fb
