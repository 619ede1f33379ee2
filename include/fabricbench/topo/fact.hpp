// topo's facts: fb::Fact (core/fact.hpp), under the name the inventory's code uses.
#pragma once

#include "fabricbench/core/fact.hpp"

namespace fb::topo {

using fb::Fact;

}  // namespace fb::topo
