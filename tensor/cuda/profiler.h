// Marks stretches of a program for a profiler attached from outside, through
// cudaProfilerStart and cudaProfilerStop: tools/kernel_profile counts only
// the GPU work that starts inside such windows.
#pragma once

namespace ts::cuda {

// A window for the scope. End it after its work has completed (synchronize
// first), so that what it captured is the window's alone.
class ProfiledRegion {
 public:
  ProfiledRegion();
  ~ProfiledRegion();
  ProfiledRegion(const ProfiledRegion&) = delete;
  ProfiledRegion& operator=(const ProfiledRegion&) = delete;
};

}  // namespace ts::cuda
