// Points the plugin registry of a test binary at the build tree's plugins
// (lib/fabricbench/ under the build folder), before any test asks for a
// backend; a FABRICBENCH_PLUGIN_DIR already set wins.
#include <cstdlib>

namespace {

const bool plugin_dir_set = [] { return setenv("FABRICBENCH_PLUGIN_DIR", FB_TEST_PLUGIN_DIR, 0) == 0; }();

}  // namespace
