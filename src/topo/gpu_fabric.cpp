// A GPU's place in a multi-node NVLink fabric (GB200/GB300 NVL72): the
// fabric manager's cluster and the clique within it name its NVLink domain.
// A GPU that has not completed registration, or that sits in another domain
// than the rest of its node, leaves its node's traffic to the network: NCCL
// joins only GPUs of one completed domain over NVLink.
#include <fmt/format.h>

#include <array>
#include <map>
#include <utility>

#include "fabricbench/core/enum_cover.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

constexpr std::array kFabricStateNames = {
    std::pair{FabricState::not_supported, "not_supported"},
    std::pair{FabricState::not_started, "not_started"},
    std::pair{FabricState::in_progress, "in_progress"},
    std::pair{FabricState::completed, "completed"},
};
static_assert(enum_cover::covers<FabricState, kFabricStateNames>([](const auto& e) { return e.first; }),
              "kFabricStateNames names every FabricState, in order");

// The domain most of the node's GPUs are in ("" when none has one).
std::string usual_domain(const std::vector<Gpu>& gpus) {
  std::map<std::string, int> count;
  for (const auto& g : gpus)
    if (g.fabric && g.fabric->joined()) ++count[g.fabric->domain()];
  std::string best;
  int most = 0;
  for (const auto& [d, n] : count)
    if (n > most) best = d, most = n;
  return best;
}

}  // namespace

const char* fabric_state_name(FabricState state) { return kFabricStateNames[static_cast<std::size_t>(state)].second; }

std::string GpuFabric::domain() const { return fmt::format("{}/{}", cluster_uuid, clique_id); }

void add_fabric_flags(std::vector<Gpu>& gpus) {
  const std::string usual = usual_domain(gpus);
  for (auto& g : gpus) {
    if (!g.fabric || g.fabric->state == FabricState::not_supported) continue;
    const GpuFabric& f = *g.fabric;
    if (f.state != FabricState::completed) {
      g.flags.push_back(fmt::format(
          "NVLink fabric state {}, not completed: this GPU is not in its NVLink domain yet, so NCCL reaches it "
          "over the network only (check the fabric manager / IMEX service)",
          fabric_state_name(f.state)));
      continue;
    }
    // NVML: the status counts once the state is completed.
    if (!f.status.empty()) {
      g.flags.push_back(
          fmt::format("NVLink fabric registration failed ({}): this GPU is not in its NVLink domain, "
                      "so NCCL reaches it over the network only",
                      f.status));
      continue;
    }
    if (!usual.empty() && f.domain() != usual)
      g.flags.push_back(
          fmt::format("NVLink domain {} differs from its node's other GPUs' ({}): traffic between them "
                      "takes the network",
                      f.domain(), usual));
  }
}

}  // namespace fb::topo
