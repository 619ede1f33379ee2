#include "bounded_thread.hpp"

#include <fmt/format.h>
#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

namespace fb::diagnose {
namespace {

// Shared by the waiting thread and the worker: whichever ends last frees it.
struct Job {
  std::function<void()> work;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
};

void* run_job(void* arg) {
  const std::unique_ptr<std::shared_ptr<Job>> owner(static_cast<std::shared_ptr<Job>*>(arg));
  Job& job = **owner;
  try {
    job.work();
  } catch (...) {
    job.error = std::current_exception();
  }
  {
    const std::lock_guard lock(job.mutex);
    job.done = true;
  }
  job.finished.notify_all();
  return nullptr;
}

void check_pthread(int rc, const char* call) {
  if (rc != 0) throw std::runtime_error(fmt::format("{} failed: {}", call, std::strerror(rc)));
}

}  // namespace

void run_bounded(std::function<void()> work, double limit_s, std::size_t stack_bytes) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  pthread_attr_t attr;
  check_pthread(pthread_attr_init(&attr), "pthread_attr_init");
  const int stack_rc = pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  auto* arg = new std::shared_ptr<Job>(job);
  const int create_rc = stack_rc != 0 ? stack_rc : pthread_create(&thread, &attr, run_job, arg);
  pthread_attr_destroy(&attr);
  if (create_rc != 0) {
    delete arg;
    check_pthread(create_rc, stack_rc != 0 ? "pthread_attr_setstacksize" : "pthread_create");
  }
  bool done = false;
  {
    std::unique_lock lock(job->mutex);
    done = job->finished.wait_for(lock, std::chrono::duration<double>(limit_s), [&] { return job->done; });
  }
  if (!done) {
    check_pthread(pthread_detach(thread), "pthread_detach");
    throw WorkTimedOut(fmt::format("still running after {:g} s", limit_s));
  }
  check_pthread(pthread_join(thread, nullptr), "pthread_join");
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace fb::diagnose
