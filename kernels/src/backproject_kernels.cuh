// The backprojection kernels and their launch parameters (passed by value,
// so nothing lives in module-global memory and contexts never share state).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace fdk::cuda {

constexpr int kMaxBatchViews = 64;  // generic kernel: views per launch
constexpr int kMaxBatchQuads = 32;  // symmetric kernel: quads (4 views) per launch
constexpr int kMaxBatchPairs = 64;  // mirror kernel: pairs (2 views) per launch

struct ViewTerms {
  float m[12];      // voxel index -> (column*w, row*w, w)
  float weight;     // generic: a_v * sid^2; quads: sid^2 (a_v is in the texels)
  float row_offset; // first detector row held by the texture
};

// `planes` planes of the output, in chunks of `chunk` planes (a multiple of
// every kernel's planes per thread) taken every `stride` planes of the
// volume from y0: output plane p < split is volume plane
// y0 + (p / chunk) * stride + p % chunk (chunk == stride: planes
// [y0, y0 + planes)); from `split` (a multiple of chunk) on, a second run
// of chunks, every `stride_b` planes from y0_b. A device holding every
// other chunk of a resident volume backprojects them all in one launch;
// one holding chunks dealt in mirror images about the volume's middle
// (chunks c and last - c together, for plane pairs) holds two such runs:
// the plane pairs' kernel takes both in one launch, the others one launch
// per run. In the slab, the second run's planes begin `gap` planes after
// the first's end (0: they follow each other; a span of the finish and its
// mirror image lie apart).
struct SlabGeometry {
  int nx, ny, nz, y0, planes;
  int chunk, stride;
  int split, y0_b, stride_b, gap;
  int columns, rows;  // detector size (the filtered one)
};

struct GenericBatch {
  SlabGeometry g;
  int count;
  ViewTerms view[kMaxBatchViews];
  cudaTextureObject_t tex[kMaxBatchViews];
};

struct QuadBatch {
  SlabGeometry g;
  int count;
  ViewTerms view[kMaxBatchQuads];  // of the quad's first view
  cudaTextureObject_t tex[kMaxBatchQuads];     // half4: the high part
  cudaTextureObject_t tex_lo[kMaxBatchQuads];  // half4: the rest (when split)
  const unsigned* quad_max;  // per quad: bits of max |value| (the texels' scale)
  int split;                 // 1: value = hi + lo (float32 storage); 0: hi only
};

struct PairBatch {
  SlabGeometry g;
  int count;
  ViewTerms view[kMaxBatchPairs];          // of the pair's first view
  cudaTextureObject_t tex[kMaxBatchPairs];  // split: half4 (hi a, hi b, lo a, lo b); else half2 (a, b)
  const unsigned* pair_max;  // per pair: bits of max |value| (the texels' scale)
  int split;
  int kind;  // the pairs' mirror (symmetry.hpp's MirrorKind), one for the batch
};
// kind 3 (MirrorKind::Plane): each "pair" is one view (a, a) whose texels
// hold rows r and rows-1-r (launch_pack_pairs' flip_rows), and a thread
// updates the planes y and ny-1-y of its column; ny % 32 == 0.

// Voxels per thread along y.
constexpr int kPlanesPerThread = 8;
// The mirror kernel: two lookups per pair and thread, so more planes keep
// as many texture fetches in flight as the quads' four.
constexpr int kPairPlanesPerThread = 16;

// slab: planes * nz * nx floats (public layout), accumulated into.
// mask: nz * nx bytes, 1 = in the field of view.
void launch_generic(const GenericBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream);
// nx == nz, even; thread (i, k) in the first quadrant also updates the
// voxels the 90, 180 and 270 degree rotations map it to.
void launch_quads(const QuadBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream);

// Thread (i, k) also updates the voxel column the batch's mirror maps it to,
// which the pair's second view sees where the first sees (i, k), the
// detector flipped: kind 0 (nz even), (i, nz-1-k) for k < nz/2; kind 1
// (nx == nz), (k, i) for i <= k; kind 2 (nx == nz), (n-1-k, n-1-i) for
// i + k <= n-1. A column on the mirror line is its own partner. Kind 3:
// thread (i, k, b) updates the run's 16-plane block b and its mirror image
// about the volume's middle, each where the run holds it (a pair of blocks
// both in the run, once).
void launch_pairs(const PairBatch& batch, float* slab, const unsigned char* mask, cudaStream_t stream);

// One mirror pair (a, b) for launch_pack_pairs: its windows (`rows` rows,
// the same for both) and angular weights, and where its texels go.
// `max_src`, when set, points at each view's largest |value| over all its
// rows (one float on the device): the pair's scale then comes from the
// whole views, not from the windows, so that a row is packed the same way
// in every window that holds it.
struct PackPair {
  const float* src[2];
  float scale[2];
  void* texels;
  int rows;
  const float* max_src[2];
};

// Mirror pairs packed in one launch (two, with their maxima) rather than
// two launches per pair: 128 launches per group filled the stream's queue
// behind a backprojection and held the filter thread.
struct PackPairBatch {
  int count;
  size_t src_pitch;         // floats
  size_t dst_pitch;         // texels
  int columns, texture_rows;
  int split;
  int flip_rows;            // b flipped along rows (rows-1-r), not columns
  unsigned* pair_max;       // per pair: bits of max |value|, zeroed beforehand
  PackPair pair[kMaxBatchPairs];
};

// Packs mirror pairs like launch_pack_half: texel column c holds a's
// column c and b's column columns-1-c (b flipped), as half4 (hi a, hi b,
// lo a, lo b) when `split`, else half2 (hi a, hi b). A view that is its own
// partner is passed twice with half its weight. The textures have
// `texture_rows` >= rows rows: those past the window repeat its last row, as
// the texture unit's clamp repeats a whole projection's (a slab's voxels
// below the detector then read what they read from a whole projection,
// never rows left by an earlier batch).
void launch_pack_pairs(const PackPairBatch& batch, cudaStream_t stream);

// Packs four filtered projections (rows x columns each, the same window),
// scaled by their angular weights, into four-channel half-precision texels:
// hi = half(x * 2^-e), and when `lo` is not null lo = half(x * 2^-e - hi),
// so hi + lo keeps about 22 bits; 2^e is set by the largest |x| of the quad
// (found first into *quad_max, which must start at 0), so no data range
// underflows or overflows half precision.
// Rows past `rows` up to `texture_rows` repeat the last (launch_pack_pairs).
// `max_src` (nullable) as PackPair's: the scale from the whole views.
void launch_pack_half(const float* const src[4], const float* const max_src[4], size_t src_pitch,
                      const float scale[4], unsigned* quad_max, ushort4* hi, ushort4* lo, size_t dst_pitch_texels,
                      int columns, int rows, int texture_rows, cudaStream_t stream);

// *max_bits = the bits of the largest |value| of one window (`rows` rows
// of `columns` floats, `pitch` floats apart); *max_bits must start at 0.
void launch_window_max(const float* window, size_t pitch, int columns, int rows, unsigned* max_bits,
                       cudaStream_t stream);

// Rows [rows, texture_rows) of a float window (pitch in floats) repeat row
// rows - 1 (launch_pack_pairs says why).
void launch_repeat_last_row(float* window, size_t pitch, int columns, int rows, int texture_rows,
                            cudaStream_t stream);

}  // namespace fdk::cuda
