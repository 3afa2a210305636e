// Launches of the backprojection and packing kernels (device/
// backprojection.cu, in the fatbin) with their parameters (kernel_params.hpp,
// passed by value, so nothing lives in module-global memory and contexts
// never share state). Host code: each launch goes through the driver.
#pragma once
#include <cuda.h>

#include "kernel_params.hpp"

namespace fdk::cuda {

// slab: planes * nz * nx floats (public layout), accumulated into.
// mask: nz * nx bytes, 1 = in the field of view.
void launch_generic(const GenericBatch& batch, float* slab, const unsigned char* mask, CUstream stream);
// nx == nz, even; thread (i, k) in the first quadrant also updates the
// voxels the 90, 180 and 270 degree rotations map it to.
void launch_quads(const QuadBatch& batch, float* slab, const unsigned char* mask, CUstream stream);

// Thread (i, k) also updates the voxel column the batch's mirror maps it to,
// which the pair's second view sees where the first sees (i, k), the
// detector flipped: kind 0 (nz even), (i, nz-1-k) for k < nz/2; kind 1
// (nx == nz), (k, i) for i <= k; kind 2 (nx == nz), (n-1-k, n-1-i) for
// i + k <= n-1. A column on the mirror line is its own partner. Kind 3:
// thread (i, k, b) updates the run's 16-plane block b and its mirror image
// about the volume's middle, each where the run holds it (a pair of blocks
// both in the run, once).
void launch_pairs(const PairBatch& batch, float* slab, const unsigned char* mask, CUstream stream);

// Packs mirror pairs like launch_pack_half: texel column c holds a's
// column c and b's column columns-1-c (b flipped), as half2 (a, b). A view
// that is its own partner is passed twice with half its weight. The textures have
// `texture_rows` >= rows rows: those past the window repeat its last row, as
// the texture unit's clamp repeats a whole projection's (a slab's voxels
// below the detector then read what they read from a whole projection,
// never rows left by an earlier batch).
void launch_pack_pairs(const PackPairBatch& batch, CUstream stream);

// Packs four filtered projections (rows x columns each, the same window),
// scaled by their angular weights, into four-channel half-precision texels:
// half(x * 2^-e), rounded to nearest; 2^e is set by the largest |x| of the quad
// (found first into *quad_max, which must start at 0), so no data range
// underflows or overflows half precision.
// Rows past `rows` up to `texture_rows` repeat the last (launch_pack_pairs).
// `max_src` (nullable) as PackPair's: the scale from the whole views.
void launch_pack_half(const float* const src[4], const float* const max_src[4], size_t src_pitch,
                      const float scale[4], uint32_t* quad_max, void* texels, size_t dst_pitch_texels,
                      int columns, int rows, int texture_rows, CUstream stream);

// *max_bits = the bits of the largest |value| of one window (`rows` rows
// of `columns` floats, `pitch` floats apart); *max_bits must start at 0.
void launch_window_max(const float* window, size_t pitch, int columns, int rows, uint32_t* max_bits,
                       CUstream stream);

// Rows [rows, texture_rows) of a float window (pitch in floats) repeat row
// rows - 1 (launch_pack_pairs says why).
void launch_repeat_last_row(float* window, size_t pitch, int columns, int rows, int texture_rows,
                            CUstream stream);

}  // namespace fdk::cuda
