#include "data/transforms/volume.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/transforms/image.h"
#include "data/transforms/remap.h"

namespace ts::data::transforms {
namespace {

absl::Status check_volume(const Tensor& v, const char* op) {
  if (!v.defined() || !v.device().is_cpu() || v.dim() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": expected a CPU volume [..., D, H, W], got ", v.defined() ? v.describe() : "undefined"));
  }
  return absl::OkStatus();
}

Box3d spatial(const Tensor& v) { return {v.size(-3), v.size(-2), v.size(-1)}; }

// The listed fields, checked to be volumes of one spatial size.
absl::StatusOr<std::vector<Tensor*>> volume_fields(Example& example, const std::vector<int>& fields, const char* op) {
  std::vector<Tensor*> out;
  for (int f : fields) {
    ASSIGN_OR_RETURN(Tensor * t, field_of(example, f, op));
    RETURN_IF_ERROR(check_volume(*t, op));
    if (!out.empty()) {
      const Box3d a = spatial(*out[0]), b = spatial(*t);
      if (a.d != b.d || a.h != b.h || a.w != b.w) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": field ", f, " is ", t->describe(), " but field ",
                                                       fields[0], " is ", out[0]->describe(),
                                                       "; their last three dims must agree"));
      }
    }
    out.push_back(t);
  }
  return out;
}

// Maps that keep the leading dims and use the given maps for the last three.
std::vector<std::vector<int64_t>> leading_identity(int64_t dims, std::vector<int64_t> d, std::vector<int64_t> h,
                                                   std::vector<int64_t> w) {
  std::vector<std::vector<int64_t>> maps(dims);
  maps[dims - 3] = std::move(d);
  maps[dims - 2] = std::move(h);
  maps[dims - 1] = std::move(w);
  return maps;
}

}  // namespace

absl::StatusOr<Tensor> crop_volume(const Tensor& volume, Box3d offset, Box3d size) {
  RETURN_IF_ERROR(check_volume(volume, "crop_volume"));
  const Box3d full = spatial(volume);
  const auto fits = [](int64_t at, int64_t n, int64_t whole) { return at >= 0 && n >= 1 && at + n <= whole; };
  if (!fits(offset.d, size.d, full.d) || !fits(offset.h, size.h, full.h) || !fits(offset.w, size.w, full.w)) {
    return absl::InvalidArgumentError(absl::StrCat("crop_volume: window of ", size.d, "x", size.h, "x", size.w, " at (",
                                                   offset.d, ", ", offset.h, ", ", offset.w, ") does not fit in ",
                                                   volume.describe()));
  }
  return remap(volume, leading_identity(volume.dim(), window_map(full.d, offset.d, size.d),
                                        window_map(full.h, offset.h, size.h), window_map(full.w, offset.w, size.w)));
}

absl::StatusOr<Tensor> flip_rotate_volume(const Tensor& volume, FlipRot3d params) {
  RETURN_IF_ERROR(check_volume(volume, "flip_rotate_volume"));
  const Box3d n = spatial(volume);
  const int k = params.rot90;
  if (k < 0 || k > 3) {
    return absl::InvalidArgumentError(absl::StrCat("flip_rotate_volume: rot90 must be in 0..3, got ", k));
  }
  if (k % 2 == 1 && n.h != n.w) {
    return absl::InvalidArgumentError(
        absl::StrCat("flip_rotate_volume: a quarter turn of ", volume.describe(), " needs H == W"));
  }
  // f = the flipped volume: f[d][h][w] = v[fd(d)][fh(h)][fw(w)]. A rotation
  // reads f at rotated coordinates:
  //   k=1: out[i][j] = f[j][W-1-i]   k=2: out[i][j] = f[H-1-i][W-1-j]
  //   k=3: out[i][j] = f[H-1-j][i]
  // Odd k read H from the output's W axis and vice versa, which a transposed
  // view of v expresses; the rest are reversals of the index maps.
  const std::vector<int64_t> d_map = window_map(n.d, 0, n.d, params.flip_d);
  const std::vector<int64_t> fh = window_map(n.h, 0, n.h, params.flip_h);
  const std::vector<int64_t> fw = window_map(n.w, 0, n.w, params.flip_w);
  const auto reversed = [](std::vector<int64_t> m) { return std::vector<int64_t>(m.rbegin(), m.rend()); };
  switch (k) {
    case 0:
      return remap(volume, leading_identity(volume.dim(), d_map, fh, fw));
    case 2:
      return remap(volume, leading_identity(volume.dim(), d_map, reversed(fh), reversed(fw)));
    default: {
      const Tensor swapped = volume.transpose(-2, -1);  // swapped[..][a][b] = v[..][b][a]
      // k=1: out[i][j] = v[fh(j)][fw(W-1-i)] = swapped[fw(W-1-i)][fh(j)]
      // k=3: out[i][j] = v[fh(H-1-j)][fw(i)] = swapped[fw(i)][fh(H-1-j)]
      return k == 1 ? remap(swapped, leading_identity(volume.dim(), d_map, reversed(fw), fh))
                    : remap(swapped, leading_identity(volume.dim(), d_map, fw, reversed(fh)));
    }
  }
}

Transform random_crop_3d(Box3d size, std::vector<int> fields) {
  return [size, fields = std::move(fields)](Example example, RandomStream& rng) -> absl::StatusOr<Example> {
    ASSIGN_OR_RETURN(std::vector<Tensor*> volumes, volume_fields(example, fields, "random_crop_3d"));
    if (volumes.empty()) return example;
    const Box3d full = spatial(*volumes[0]);
    if (size.d > full.d || size.h > full.h || size.w > full.w) {
      return absl::InvalidArgumentError(absl::StrCat("random_crop_3d: a ", size.d, "x", size.h, "x", size.w,
                                                     " crop does not fit in ", volumes[0]->describe()));
    }
    Box3d offset;
    offset.d = rng.uniform_int(full.d - size.d + 1);
    offset.h = rng.uniform_int(full.h - size.h + 1);
    offset.w = rng.uniform_int(full.w - size.w + 1);
    for (Tensor* v : volumes) {
      ASSIGN_OR_RETURN(*v, crop_volume(*v, offset, size));
    }
    return example;
  };
}

Transform random_flip_rotate_3d(double flip_probability, bool rotate, std::vector<int> fields) {
  return [=, fields = std::move(fields)](Example example, RandomStream& rng) -> absl::StatusOr<Example> {
    ASSIGN_OR_RETURN(std::vector<Tensor*> volumes, volume_fields(example, fields, "random_flip_rotate_3d"));
    if (volumes.empty()) return example;
    FlipRot3d params;
    params.flip_d = rng.bernoulli(flip_probability);
    params.flip_h = rng.bernoulli(flip_probability);
    params.flip_w = rng.bernoulli(flip_probability);
    const Box3d full = spatial(*volumes[0]);
    if (rotate && full.h == full.w) params.rot90 = static_cast<int>(rng.uniform_int(4));
    for (Tensor* v : volumes) {
      ASSIGN_OR_RETURN(*v, flip_rotate_volume(*v, params));
    }
    return example;
  };
}

}  // namespace ts::data::transforms
