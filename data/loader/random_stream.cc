#include "data/loader/random_stream.h"

#include <cmath>

namespace ts::data {

double RandomStream::normal() {
  const double u0 = 1.0 - uniform();  // (0, 1]: the log stays finite
  const double u1 = uniform();
  return std::sqrt(-2.0 * std::log(u0)) * std::cos(6.283185307179586476925 * u1);
}

}  // namespace ts::data
