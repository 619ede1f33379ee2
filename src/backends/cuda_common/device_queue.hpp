// The seam between the GPU backends' timing logic and the CUDA runtime: the
// calls StreamTimer makes on one device's stream, with no CUDA type in sight.
// CudaQueue (cuda_queue.hpp) forwards each to CUDA and checks its return code;
// the unit tests drive the same StreamTimer through a host double on a
// virtual clock (tests/backends/stream_timer_test.cpp), so what it queues, how
// often captured work runs and how it turns event times into iteration times
// are tested on any machine.
#pragma once

#include <cstddef>

namespace fb::gpu {

class DeviceQueue {
 public:
  virtual ~DeviceQueue() = default;

  // Events are numbered 0..n-1; this makes sure there are at least `n`.
  virtual void ensure_events(std::size_t n) = 0;
  // Records event `e` on the stream, after everything queued so far.
  virtual void record(std::size_t e) = 0;
  // Returns when event `e` (recorded) has completed.
  virtual void wait(std::size_t e) = 0;
  // Device time between two completed events.
  virtual double elapsed_us(std::size_t from, std::size_t to) = 0;

  // Work queued between these two is captured into the queue's graph, not
  // run (StreamTimer drops the previous graph first).
  virtual void begin_capture() = 0;
  virtual void end_capture() = 0;
  // Ends a capture that failed part-way, keeping no graph; never throws.
  virtual void abandon_capture() noexcept = 0;
  // Readies the graph on the device without running it (the first launch of
  // a graph would otherwise pay for the upload).
  virtual void upload_graph() = 0;
  // Runs the captured work once, queued on the stream.
  virtual void launch_graph() = 0;
  virtual void drop_graph() noexcept = 0;
};

}  // namespace fb::gpu
