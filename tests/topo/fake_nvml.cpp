#include "fake_nvml.hpp"

#include <fmt/format.h>

namespace fb::test {
namespace {

FakeGpu h100(const std::string& bus, int n) {
  FakeGpu g;
  g.bus_id = "00000000:" + bus + ":00.0";
  g.uuid = fmt::format("GPU-00000000-0000-0000-0000-00000000000{}", n);
  g.links.assign(18, FakeLink{});
  return g;
}

}  // namespace

FakeNvml fake_hgx_h100() {
  FakeNvml f;
  int n = 0;
  for (const char* bus : {"1A", "1C", "3B", "3D", "9A", "9C", "BB", "BD"}) f.gpus.push_back(h100(bus, n++));
  return f;
}

FakeNvml fake_roce_l40s() {
  FakeNvml f;
  for (const char* bus : {"41", "C1"}) {
    FakeGpu g;
    g.name = "NVIDIA L40S";
    g.bus_id = std::string("00000000:") + bus + ":00.0";
    g.uuid = std::string("GPU-l40s-") + bus;
    g.memory_bytes = 48305799168ull;  // 46068 MiB
    g.arch = 8;                       // Ada
    g.gen = g.max_gen = g.device_max_gen = 4;
    f.gpus.push_back(g);
  }
  return f;
}

FakeNvml fake_efa_2gpu() {
  FakeNvml f;
  int n = 0;
  for (const char* bus : {"23", "43"}) {
    f.gpus.push_back(h100(bus, n++));
    f.gpus.back().links.clear();  // the p5's NVSwitch links are not what this fixture is about
  }
  return f;
}

FakeNvml fake_degraded() {
  FakeNvml f;
  int n = 0;
  for (const char* bus : {"1A", "1B", "1C", "1D"}) f.gpus.push_back(h100(bus, n++));
  f.gpus[0].gen = 1;  // idle (P8): the link speed is lowered to save power, not a fault
  f.gpus[0].pstate = 8;
  f.gpus[1].links[4].active = false;
  f.gpus[1].links[9].active = false;
  f.gpus[2].gen = 4;  // under load (P0) and still Gen4 x8: a fault
  f.gpus[2].width = 8;
  return f;
}

FakeNvml fake_gb200_tray(const std::string& cluster_uuid, unsigned clique) {
  FakeNvml f;
  int n = 0;
  for (const char* bus : {"1A", "1C", "3B", "3D"}) {
    FakeGpu g = h100(bus, n++);
    g.name = "NVIDIA GB200";
    g.arch = 10;  // Blackwell
    g.memory_bytes = 199715979264ull;
    g.fabric = {cluster_uuid, clique, topo::FabricState::completed, ""};
    f.gpus.push_back(g);
  }
  return f;
}

FakeNvml fake_h200_vm() {
  FakeNvml f;
  FakeGpu g;
  g.name = "NVIDIA H200";
  g.bus_id = "00000000:00:05.0";
  g.uuid = "GPU-h200-0000";
  g.memory_bytes = 150754820096ull;  // 143771 MiB
  f.gpus.push_back(g);
  return f;
}

}  // namespace fb::test
