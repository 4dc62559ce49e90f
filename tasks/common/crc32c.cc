#include "tasks/common/crc32c.h"

#include "nn/crc32c.h"

namespace ts::tasks {

uint32_t crc32c(absl::string_view data, uint32_t crc) {
  return nn::crc32c_extend(crc, data.data(), data.size());
}

}  // namespace ts::tasks
