// Marks functions compiled for both host and device when nvcc builds them,
// and as plain inline functions otherwise.
#pragma once

#if defined(__CUDACC__)
#define TS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TS_HOST_DEVICE inline
#endif
