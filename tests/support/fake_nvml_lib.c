/* A stand-in for the NVIDIA driver's libnvidia-ml.so.1, built under that name
 * in its own folder: a test puts the folder on LD_LIBRARY_PATH of the ranks,
 * and the real fabricbench binary's dlopen finds it instead of a driver. It
 * answers only the calls that say who uses a GPU, the GPUs' bus ids and
 * their error and throttle counters (and the few every NVML user needs);
 * every other call is absent, which fabricbench reports as
 * "not in this driver's NVML". Declared from the NVML API reference, like
 * src/topo/nvml_abi.hpp. Configured by the environment:
 *   FB_FAKE_NVML_GPUS=N                    GPUs (default 1)
 *   FB_FAKE_NVML_PROCESSES=G:PID:MIB,...   compute processes on GPU G; PID
 *                                          "self" is the calling process
 *   FB_FAKE_NVML_COMPUTE_MODE=G:M,...      nvmlComputeMode_t M of GPU G (default 0)
 *   FB_FAKE_NVML_MIG=G,...                 GPUs with MIG mode on
 *   FB_FAKE_NVML_COUNTERS=/path            error counters: lines "GPU COUNTER VALUE",
 *                                          COUNTER as the record names it
 *                                          (nvlink_crc_errors, ecc_corrected,
 *                                          xid_events, throttle_power_us, ...);
 *                                          re-read at every call, so a test can
 *                                          raise one while a run measures. A
 *                                          counter not in the file is
 *                                          NOT_SUPPORTED (xid_events: 0).
 *   FB_FAKE_NVML_FABRIC=UUID:CLIQUE[:STATE] every GPU's multi-node NVLink fabric
 *                                          (nvmlDeviceGetGpuFabricInfo; STATE an
 *                                          nvmlGpuFabricState_t, default 3
 *                                          completed); unset: NOT_SUPPORTED
 *   FB_FAKE_NVML_NVLINKS=LINKS:VERSION     every GPU's NVLink: links 0..LINKS-1 active,
 *                                          each to an NVSwitch, VERSION an
 *                                          nvmlNvlinkVersion_t (7: NVLink 5, as on
 *                                          GB200); unset: no link (NOT_SUPPORTED)
 * GPU G's bus id is 00000000:E0+G:00.0 (a bus no test machine has).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

enum { kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kInsufficientSize = 7, kTimeout = 10 };
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
    case kTimeout:
      return "Timeout";
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

/* ---- Bus ids ------------------------------------------------------------- */

typedef struct PciInfo { /* nvmlPciInfo_t, as nvmlDeviceGetPciInfo_v3 fills it */
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} PciInfo;

FAKE_EXPORT int nvmlDeviceGetPciInfo_v3(FakeDevice* device, PciInfo* pci) {
  const int i = device_index(device);
  if (i < 0 || !pci) return kInvalidArgument;
  memset(pci, 0, sizeof(*pci));
  pci->bus = 0xE0u + (unsigned)i;
  snprintf(pci->bus_id, sizeof(pci->bus_id), "00000000:%02X:00.0", pci->bus);
  snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "0000:%02X:00.0", pci->bus);
  return kSuccess;
}

/* ---- Error and throttle counters, from FB_FAKE_NVML_COUNTERS ---------------- */

/* GPU `gpu`'s COUNTER `name` in the file now: 1 and *value when there, else 0. */
static int counter_now(unsigned gpu, const char* name, unsigned long long* value) {
  const char* path = getenv("FB_FAKE_NVML_COUNTERS");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return 0;
  unsigned g = 0;
  char n[64];
  unsigned long long v = 0;
  int found = 0;
  while (fscanf(f, "%u %63s %llu", &g, n, &v) == 3)
    if (g == gpu && strcmp(n, name) == 0) found = 1, *value = v;
  fclose(f);
  return found;
}

typedef union Value { /* nvmlValue_t */
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
} Value;

typedef struct FieldValue { /* nvmlFieldValue_t */
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp_us;
  long long latency_us;
  int value_type;
  int nvml_return;
  Value value;
} FieldValue;

/* The NVLink error totals' field ids (nvml.h), each with its counter's name. */
static const struct {
  unsigned field_id;
  const char* counter;
} kFields[] = {{38, "nvlink_crc_errors"}, {52, "nvlink_replay_errors"}, {59, "nvlink_recovery_errors"}};

FAKE_EXPORT int nvmlDeviceGetFieldValues(FakeDevice* device, int count, FieldValue* values) {
  const int i = device_index(device);
  if (i < 0 || count < 0 || (count > 0 && !values)) return kInvalidArgument;
  for (int k = 0; k < count; ++k) {
    values[k].nvml_return = kNotSupported;
    for (size_t f = 0; f < sizeof(kFields) / sizeof(kFields[0]); ++f)
      if (kFields[f].field_id == values[k].field_id &&
          counter_now((unsigned)i, kFields[f].counter, &values[k].value.ull)) {
        values[k].value_type = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
        values[k].nvml_return = kSuccess;
      }
  }
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetTotalEccErrors(FakeDevice* device, int error_type, int counter_type,
                                            unsigned long long* count) {
  const int i = device_index(device);
  if (i < 0 || !count || error_type < 0 || error_type > 1) return kInvalidArgument;
  if (counter_type != 0) return kNotSupported; /* only the volatile counts are faked */
  return counter_now((unsigned)i, error_type == 0 ? "ecc_corrected" : "ecc_uncorrected", count) ? kSuccess
                                                                                                : kNotSupported;
}

typedef struct ViolationTime { /* nvmlViolationTime_t */
  unsigned long long reference_time_us;
  unsigned long long violation_time_ns;
} ViolationTime;

FAKE_EXPORT int nvmlDeviceGetViolationStatus(FakeDevice* device, int policy, ViolationTime* t) {
  const int i = device_index(device);
  if (i < 0 || !t || policy < 0) return kInvalidArgument;
  const char* name = policy == 0 ? "throttle_power_us" : policy == 1 ? "throttle_thermal_us" : NULL;
  unsigned long long us = 0;
  if (!name || !counter_now((unsigned)i, name, &us)) return kNotSupported;
  t->reference_time_us = 0;
  t->violation_time_ns = us * 1000ull;
  return kSuccess;
}

/* ---- Critical XID events: one event per unit xid_events rose by ---------- */

typedef struct EventData { /* nvmlEventData_t */
  FakeDevice* device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
} EventData;

enum { kEventTypeXid = 8 }; /* nvmlEventTypeXidCriticalError */

typedef struct FakeEventSet {
  int registered[kMaxGpus];
  unsigned long long delivered[kMaxGpus];
} FakeEventSet;
static FakeEventSet event_set;

FAKE_EXPORT int nvmlEventSetCreate(FakeEventSet** set) {
  if (!set) return kInvalidArgument;
  memset(&event_set, 0, sizeof(event_set));
  *set = &event_set;
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceRegisterEvents(FakeDevice* device, unsigned long long types, FakeEventSet* set) {
  const int i = device_index(device);
  if (i < 0 || set != &event_set) return kInvalidArgument;
  if (types & ~(unsigned long long)kEventTypeXid) return kNotSupported;
  /* Events before registration are not delivered: start from the count now. */
  unsigned long long now = 0;
  counter_now((unsigned)i, "xid_events", &now);
  set->registered[i] = 1;
  set->delivered[i] = now;
  return kSuccess;
}

FAKE_EXPORT int nvmlEventSetWait_v2(FakeEventSet* set, EventData* data, unsigned timeout_ms) {
  (void)timeout_ms; /* never waits: a test raises the count before the read */
  if (set != &event_set || !data) return kInvalidArgument;
  for (unsigned g = 0; g < gpu_count(); ++g) {
    unsigned long long now = 0;
    if (!set->registered[g] || !counter_now(g, "xid_events", &now) || now <= set->delivered[g]) continue;
    ++set->delivered[g];
    devices[g].index = g;
    memset(data, 0, sizeof(*data));
    data->device = &devices[g];
    data->event_type = kEventTypeXid;
    data->event_data = 79; /* "GPU has fallen off the bus" */
    return kSuccess;
  }
  return kTimeout;
}

FAKE_EXPORT int nvmlEventSetFree(FakeEventSet* set) { return set == &event_set ? kSuccess : kInvalidArgument; }

/* ---- Multi-node NVLink: every GPU in the fabric of FB_FAKE_NVML_FABRIC ---- */

typedef struct GpuFabricInfo { /* nvmlGpuFabricInfo_t */
  unsigned char cluster_uuid[16];
  int status;
  unsigned int clique_id;
  unsigned char state;
} GpuFabricInfo;

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* "UUID:CLIQUE[:STATE]" (UUID in 8-4-4-4-12 form, STATE an
 * nvmlGpuFabricState_t, default 3 completed) into `info`; 0 when malformed. */
static int parse_fabric(const char* s, GpuFabricInfo* info) {
  unsigned n = 0;
  for (; *s && *s != ':'; ++s) {
    if (*s == '-') continue;
    const int d = hex_digit(*s);
    if (d < 0 || n >= 32) return 0;
    info->cluster_uuid[n / 2] = (unsigned char)(info->cluster_uuid[n / 2] << 4 | d);
    ++n;
  }
  if (n != 32 || *s != ':') return 0;
  char* end = NULL;
  info->clique_id = (unsigned)strtoul(s + 1, &end, 10);
  info->state = 3;
  if (end && *end == ':') info->state = (unsigned char)strtoul(end + 1, NULL, 10);
  return 1;
}

/* A GPU without FB_FAKE_NVML_FABRIC is not a multi-node NVLink GPU: NVML
 * answers NOT_SUPPORTED, as it does on an HGX. */
FAKE_EXPORT int nvmlDeviceGetGpuFabricInfo(FakeDevice* device, GpuFabricInfo* info) {
  const int i = device_index(device);
  if (i < 0 || !info) return kInvalidArgument;
  const char* fabric = getenv("FB_FAKE_NVML_FABRIC");
  if (!fabric || !*fabric) return kNotSupported;
  memset(info, 0, sizeof(*info));
  return parse_fabric(fabric, info) ? kSuccess : kInvalidArgument;
}

/* FB_FAKE_NVML_NVLINKS "LINKS:VERSION": 0 when unset or malformed. */
static unsigned nvlinks(unsigned* version) {
  const char* s = getenv("FB_FAKE_NVML_NVLINKS");
  if (!s || !*s) return 0;
  char* end = NULL;
  const unsigned long links = strtoul(s, &end, 10);
  if (!end || *end != ':') return 0;
  *version = (unsigned)strtoul(end + 1, NULL, 10);
  return links > 18 ? 18u : (unsigned)links;
}

enum { kFeatureEnabled = 1, kNvLinkDeviceSwitch = 2 };

FAKE_EXPORT int nvmlDeviceGetNvLinkState(FakeDevice* device, unsigned link, int* active) {
  unsigned version = 0;
  if (device_index(device) < 0 || !active) return kInvalidArgument;
  if (link >= nvlinks(&version)) return kNotSupported;
  *active = kFeatureEnabled;
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetNvLinkVersion(FakeDevice* device, unsigned link, unsigned* version) {
  if (device_index(device) < 0 || !version) return kInvalidArgument;
  return link < nvlinks(version) ? kSuccess : kNotSupported;
}

FAKE_EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(FakeDevice* device, unsigned link, int* type) {
  unsigned version = 0;
  if (device_index(device) < 0 || !type) return kInvalidArgument;
  if (link >= nvlinks(&version)) return kNotSupported;
  *type = kNvLinkDeviceSwitch;
  return kSuccess;
}
