#pragma once
// Where a fabricbench finds its parts (plugins, profiles): relative to its own
// binary, so an install prefix or an unpacked .deb works wherever it lies.
#include <string>

namespace fb {

// The folder of the running binary (/proc/self/exe, symbolic links resolved);
// "" when it cannot be read.
[[nodiscard]] std::string binary_dir();

}  // namespace fb
