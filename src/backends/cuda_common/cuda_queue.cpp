#include "cuda_queue.hpp"

#include <sched.h>

#include "gpu_error.hpp"

namespace fb::gpu {

CudaQueue::~CudaQueue() {
  drop_graph();
  for (cudaEvent_t e : events_) cudaEventDestroy(e);  // teardown: nothing left to report to
}

void CudaQueue::ensure_events(std::size_t n) {
  while (events_.size() < n) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate", device_);
    events_.push_back(e);
  }
}

void CudaQueue::record(std::size_t e) { check(cudaEventRecord(events_.at(e), stream_), "cudaEventRecord", device_); }

void CudaQueue::wait(std::size_t e) {
  if (!poll_) return check(cudaEventSynchronize(events_.at(e)), "cudaEventSynchronize", device_);
  while (true) {
    const cudaError_t rc = cudaEventQuery(events_.at(e));
    if (rc == cudaSuccess) return;
    if (rc != cudaErrorNotReady) check(rc, "cudaEventQuery", device_);
    poll_();
    sched_yield();
  }
}

double CudaQueue::elapsed_us(std::size_t from, std::size_t to) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, events_.at(from), events_.at(to)), "cudaEventElapsedTime", device_);
  return static_cast<double>(ms) * 1e3;
}

void CudaQueue::begin_capture() {
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture", device_);
}

void CudaQueue::end_capture() {
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture", device_);
  const cudaError_t rc = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  if (rc != cudaSuccess) graph_ = nullptr;
  check(rc, "cudaGraphInstantiate", device_);
}

void CudaQueue::abandon_capture() noexcept {
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream_, &graph);  // already failing: the first error is the one reported
  if (graph) cudaGraphDestroy(graph);
}

void CudaQueue::upload_graph() { check(cudaGraphUpload(graph_, stream_), "cudaGraphUpload", device_); }

void CudaQueue::launch_graph() { check(cudaGraphLaunch(graph_, stream_), "cudaGraphLaunch", device_); }

void CudaQueue::drop_graph() noexcept {
  if (graph_) cudaGraphExecDestroy(graph_);
  graph_ = nullptr;
}

}  // namespace fb::gpu
