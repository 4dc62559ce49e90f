#include "nn/functional/cpu/onednn_runtime.h"

namespace ts::nn::functional {

// Leaked on purpose: primitives cached in static caches may outlive a
// destroyed engine at exit.
OnednnRuntime& onednn_runtime() {
  static OnednnRuntime* instance = new OnednnRuntime;
  return *instance;
}

}  // namespace ts::nn::functional
