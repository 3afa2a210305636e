// The synthetic projections fdk-bench pushes, apart from the timing code so
// that the data the figures were measured on is defined in one place.
#pragma once

namespace fdk_bench {

// One view: rows x cols floats, contiguous (smooth Gaussian blobs that orbit
// like a sinogram, plus a small hash noise, never zero).
void make_projection(int view, int num_views, int cols, int rows, float* out);

}  // namespace fdk_bench
