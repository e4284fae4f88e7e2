// A fake NVIDIA driver for testing tests/gpu/run-on-gpu.sh without a GPU:
// built (by fake-gpu-check.sh) as both libnvidia-ml.so.1 and libcuda.so.1.
//
// State lives in $FAKE_GPU_DIR/procs/<pid>: "<gpu> <bytes>" for every process
// that created a CUDA context through the fake libcuda. The fake NVML lists
// the live ones, exactly as the fake nvidia-smi beside this file does, so the
// script's comparisons and its own GPU process can be exercised end to end.
// The NVML half uses the real exported names and the real ABI (the v3
// process list writes 24-byte records; memory v2 insists on 0x02000028).

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kGpus = 2;
constexpr unsigned long long kMiB = 1ULL << 20;
constexpr unsigned long long kTotal = 81559 * kMiB;
constexpr unsigned long long kBaseUsed = 4 * kMiB;
constexpr unsigned long long kReserved = 527 * kMiB;

const char* Uuid(int i) {
  return i == 0 ? "GPU-fa4e0000-1111-2222-3333-444444444444" : "GPU-fa4e0001-5555-6666-7777-888888888888";
}

std::string Dir() {
  const char* d = std::getenv("FAKE_GPU_DIR");
  return std::string(d != nullptr ? d : "/tmp/fake-gpu") + "/procs";
}

bool Alive(int pid) {
  char path[64], buf[512] = {};
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  return close != nullptr && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X';
}

struct Proc {
  int pid;
  int gpu;
  unsigned long long bytes;
};

std::vector<Proc> Procs() {
  std::vector<Proc> out;
  DIR* d = opendir(Dir().c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0 || !Alive(pid)) continue;
    FILE* f = std::fopen((Dir() + "/" + e->d_name).c_str(), "r");
    if (f == nullptr) continue;
    // FAKE_GPU_PID_SHIFT mimics a container in its own PID namespace: the
    // driver reports host PIDs that this /proc does not have.
    const char* shift = std::getenv("FAKE_GPU_PID_SHIFT");
    Proc p{pid + (shift != nullptr ? std::atoi(shift) : 0), 0, 0};
    if (std::fscanf(f, "%d %llu", &p.gpu, &p.bytes) == 2) out.push_back(p);
    std::fclose(f);
  }
  closedir(d);
  return out;
}

unsigned long long Used(int gpu) {
  unsigned long long used = kBaseUsed;
  for (const Proc& p : Procs())
    if (p.gpu == gpu) used += p.bytes;
  return used;
}

// libcuda side: this process's footprint.
int g_device = -1;
unsigned long long g_bytes = 0;
void Publish() {
  mkdir(Dir().c_str(), 01777);
  std::string path = Dir() + "/" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f, "%d %llu\n", g_device, g_bytes);
  std::fclose(f);
}

int Index(void* device) { return static_cast<int>(reinterpret_cast<intptr_t>(device)) - 1; }

struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct Memory {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct Utilization {
  unsigned int gpu, memory;
};

}  // namespace

extern "C" {

// ---- libcuda ------------------------------------------------------------------
int cuInit(unsigned int) { return 0; }
int cuDeviceGet(int* dev, int ordinal) {
  if (ordinal < 0 || ordinal >= kGpus) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *dev = ordinal;
  return 0;
}
int cuCtxCreate_v2(void** ctx, unsigned int, int dev) {
  g_device = dev;
  g_bytes = 300 * kMiB;  // a context costs memory, as on real GPUs
  *ctx = &g_device;
  Publish();
  return 0;
}
int cuMemAlloc_v2(unsigned long long* ptr, size_t bytes) {
  if (g_device < 0) return 201;  // CUDA_ERROR_INVALID_CONTEXT
  g_bytes += bytes;
  *ptr = 0x7f0000000000ULL;
  Publish();
  return 0;
}

// ---- NVML ----------------------------------------------------------------------
int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int rc) { return rc == 7 ? "Insufficient Size" : "Fake NVML Error"; }
int nvmlSystemGetDriverVersion(char* v, unsigned int n) {
  std::snprintf(v, n, "999.99-fake");
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = kGpus;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** device) {
  if (i >= kGpus) return 2;
  *device = reinterpret_cast<void*>(static_cast<intptr_t>(i + 1));
  return 0;
}
int nvmlDeviceGetUUID(void* d, char* buf, unsigned int n) {
  std::snprintf(buf, n, "%s", Uuid(Index(d)));
  return 0;
}
int nvmlDeviceGetName(void*, char* buf, unsigned int n) {
  std::snprintf(buf, n, "Fake GPU 80GB");
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* d, Memory* m) {
  m->total = kTotal;
  m->used = Used(Index(d)) + kReserved;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetMemoryInfo_v2(void* d, MemoryV2* m) {
  if (m->version != 0x02000028u) return 13;  // FUNCTION_NOT_FOUND, as real drivers answer
  m->total = kTotal;
  m->reserved = kReserved;
  m->used = Used(Index(d));
  m->free = m->total - m->used - m->reserved;
  return 0;
}
int nvmlDeviceGetUtilizationRates(void*, Utilization* u) {
  u->gpu = 0;
  u->memory = 0;
  return 0;
}
int nvmlDeviceGetTemperature(void*, unsigned int, unsigned int* t) {
  *t = 33;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* d, unsigned int* count, ProcessInfoV2* infos) {
  std::vector<ProcessInfoV2> mine;
  for (const Proc& p : Procs())
    if (p.gpu == Index(d))
      mine.push_back({static_cast<unsigned>(p.pid), p.bytes, 0xFFFFFFFFu, 0xFFFFFFFFu});
  if (*count < mine.size()) {
    *count = static_cast<unsigned int>(mine.size());
    return 7;  // INSUFFICIENT_SIZE
  }
  for (size_t i = 0; i < mine.size(); ++i) infos[i] = mine[i];
  *count = static_cast<unsigned int>(mine.size());
  return 0;
}
int nvmlDeviceGetGraphicsRunningProcesses_v3(void*, unsigned int* count, ProcessInfoV2*) {
  *count = 0;
  return 0;
}
int nvmlDeviceGetProcessUtilization(void*, void*, unsigned int*, unsigned long long) {
  return 6;  // NOT_FOUND: no samples, as on an idle GPU
}

}  // extern "C"
