/* A stand-in for the NVIDIA driver's libnvidia-ml.so.1, built under that name
 * in its own folder: a test puts the folder on LD_LIBRARY_PATH of the ranks,
 * and the real fabricbench binary's dlopen finds it instead of a driver. It
 * answers only the calls that say who uses a GPU (and the few every NVML
 * user needs); every other call is absent, which fabricbench reports as
 * "not in this driver's NVML". Declared from the NVML API reference, like
 * src/topo/nvml_abi.hpp. Configured by the environment:
 *   FB_FAKE_NVML_GPUS=N                    GPUs (default 1)
 *   FB_FAKE_NVML_PROCESSES=G:PID:MIB,...   compute processes on GPU G; PID
 *                                          "self" is the calling process
 *   FB_FAKE_NVML_COMPUTE_MODE=G:M,...      nvmlComputeMode_t M of GPU G (default 0)
 *   FB_FAKE_NVML_MIG=G,...                 GPUs with MIG mode on
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

enum { kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kInsufficientSize = 7 };
enum { kMaxGpus = 16, kMaxProcesses = 64 };

typedef struct FakeDevice {
  unsigned index;
} FakeDevice;

typedef struct ProcessInfo { /* nvmlProcessInfo_t, the _v3 calls' layout */
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
} ProcessInfo;

static FakeDevice devices[kMaxGpus];

static unsigned gpu_count(void) {
  const char* n = getenv("FB_FAKE_NVML_GPUS");
  const long v = n ? strtol(n, NULL, 10) : 1;
  return v < 0 ? 0u : v > kMaxGpus ? (unsigned)kMaxGpus : (unsigned)v;
}

static int device_index(const FakeDevice* d) {
  if (d < devices || d >= devices + kMaxGpus || d->index >= gpu_count()) return -1;
  return (int)d->index;
}

/* The next "G:..." entry of a comma list; NULL at its end. */
static const char* next_entry(const char* s, unsigned* gpu) {
  while (s && *s == ',') ++s;
  if (!s || !*s) return NULL;
  *gpu = (unsigned)strtoul(s, NULL, 10);
  return s;
}

static const char* after_comma(const char* s) {
  const char* c = strchr(s, ',');
  return c ? c + 1 : NULL;
}

FAKE_EXPORT int nvmlInit_v2(void) { return kSuccess; }
FAKE_EXPORT int nvmlShutdown(void) { return kSuccess; }
FAKE_EXPORT const char* nvmlErrorString(int r) {
  switch (r) {
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kInsufficientSize:
      return "Insufficient Size";
    default:
      return "Unknown Error";
  }
}

FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!count) return kInvalidArgument;
  *count = gpu_count();
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, FakeDevice** device) {
  if (!device || index >= gpu_count()) return kInvalidArgument;
  devices[index].index = index;
  *device = &devices[index];
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetName(FakeDevice* device, char* name, unsigned length) {
  const int i = device_index(device);
  if (i < 0 || !name || length == 0) return kInvalidArgument;
  snprintf(name, length, "fabricbench fake GPU %d", i);
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(FakeDevice* device, unsigned* count, ProcessInfo* infos) {
  const int i = device_index(device);
  if (i < 0 || !count) return kInvalidArgument;
  ProcessInfo found[kMaxProcesses];
  unsigned n = 0;
  unsigned gpu = 0;
  for (const char* e = next_entry(getenv("FB_FAKE_NVML_PROCESSES"), &gpu); e && n < kMaxProcesses;
       e = next_entry(after_comma(e), &gpu)) {
    if (gpu != (unsigned)i) continue;
    const char* pid = strchr(e, ':');
    const char* mib = pid ? strchr(pid + 1, ':') : NULL;
    if (!pid || !mib) continue;
    ProcessInfo p = {0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu};
    p.pid = strncmp(pid + 1, "self", 4) == 0 ? (unsigned)getpid() : (unsigned)strtoul(pid + 1, NULL, 10);
    p.used_gpu_memory = strtoull(mib + 1, NULL, 10) << 20;
    found[n++] = p;
  }
  const unsigned room = *count;
  *count = n;
  if (n > room) return kInsufficientSize;
  if (n > 0 && !infos) return kInvalidArgument;
  if (n > 0) memcpy(infos, found, n * sizeof(ProcessInfo));
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetComputeMode(FakeDevice* device, int* mode) {
  const int i = device_index(device);
  if (i < 0 || !mode) return kInvalidArgument;
  *mode = 0;
  unsigned gpu = 0;
  for (const char* e = next_entry(getenv("FB_FAKE_NVML_COMPUTE_MODE"), &gpu); e; e = next_entry(after_comma(e), &gpu)) {
    const char* m = strchr(e, ':');
    if (gpu == (unsigned)i && m) *mode = (int)strtol(m + 1, NULL, 10);
  }
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetMigMode(FakeDevice* device, unsigned* current, unsigned* pending) {
  const int i = device_index(device);
  if (i < 0 || !current || !pending) return kInvalidArgument;
  *current = *pending = 0;
  unsigned gpu = 0;
  for (const char* e = next_entry(getenv("FB_FAKE_NVML_MIG"), &gpu); e; e = next_entry(after_comma(e), &gpu))
    if (gpu == (unsigned)i) *current = *pending = 1;
  return kSuccess;
}
