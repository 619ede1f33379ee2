// DeviceQueue on a CUDA stream: each call forwards to the CUDA runtime and
// checks its return code; the decisions stay in StreamTimer.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "device_queue.hpp"

namespace fb::gpu {

class CudaQueue final : public DeviceQueue {
 public:
  // Without `poll`, a wait is cudaEventSynchronize; with it, cudaEventQuery
  // with `poll` between queries (NCCL's waits, so that an abort can end them).
  CudaQueue(cudaStream_t stream, int device, std::function<void()> poll = {})
      : stream_(stream), device_(device), poll_(std::move(poll)) {}
  ~CudaQueue() override;
  CudaQueue(const CudaQueue&) = delete;
  CudaQueue& operator=(const CudaQueue&) = delete;

  void ensure_events(std::size_t n) override;
  void record(std::size_t e) override;
  void wait(std::size_t e) override;
  double elapsed_us(std::size_t from, std::size_t to) override;
  void begin_capture() override;
  void end_capture() override;
  void abandon_capture() noexcept override;
  void upload_graph() override;
  void launch_graph() override;
  void drop_graph() noexcept override;

 private:
  cudaStream_t stream_;
  int device_;
  std::function<void()> poll_;
  std::vector<cudaEvent_t> events_;
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace fb::gpu
