#include "tensor/device.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ts {

std::string Device::to_string() const { return is_cpu() ? std::string("cpu") : absl::StrCat("cuda:", index); }

absl::StatusOr<Device> parse_device(absl::string_view text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  absl::string_view rest = text;
  int index = 0;
  if (absl::ConsumePrefix(&rest, "cuda:") && absl::SimpleAtoi(rest, &index) && index >= 0) {
    return Device::cuda(index);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown device '", text, "' (expected cpu, cuda or cuda:N)"));
}

}  // namespace ts
