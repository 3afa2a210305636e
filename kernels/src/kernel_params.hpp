// The kernels' parameters, as host code (g++, MinGW, MSVC) builds them and
// the device code (nvcc, a fatbin loaded at run time) reads them: passed by
// value to cuLaunchKernel, so both sides must lay them out alike. Only
// fixed-width fields, device addresses as 64-bit words (DevicePtr), and
// every struct's size and field offsets pinned below, so a compiler that
// lays one out otherwise fails the build instead of the reconstruction.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define FDK_HOST_DEVICE __host__ __device__
#else
#define FDK_HOST_DEVICE
#endif

namespace fdk::cuda {

// A device address of a T: a 64-bit word that host code sets from a
// pointer and device code reads as one.
template <class T>
struct DevicePtr {
  uint64_t address;
  DevicePtr() = default;
  FDK_HOST_DEVICE DevicePtr(T* p) : address(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p))) {}
  FDK_HOST_DEVICE operator T*() const { return reinterpret_cast<T*>(static_cast<uintptr_t>(address)); }
  FDK_HOST_DEVICE explicit operator bool() const { return address != 0; }
};
static_assert(sizeof(DevicePtr<float>) == 8 && alignof(DevicePtr<float>) == 8, "DevicePtr is one 64-bit word");

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
  int32_t nx, ny, nz, y0, planes;
  int32_t chunk, stride;
  int32_t split, y0_b, stride_b, gap;
  int32_t columns, rows;  // detector size (the filtered one)
};

struct GenericBatch {
  SlabGeometry g;
  int32_t count;
  ViewTerms view[kMaxBatchViews];
  uint64_t tex[kMaxBatchViews];
};

struct QuadBatch {
  SlabGeometry g;
  int32_t count;
  ViewTerms view[kMaxBatchQuads];  // of the quad's first view
  uint64_t tex[kMaxBatchQuads];     // half4: the quad's four views
  DevicePtr<const uint32_t> quad_max;  // per quad: bits of max |value| (the texels' scale)
};

struct PairBatch {
  SlabGeometry g;
  int32_t count;
  ViewTerms view[kMaxBatchPairs];          // of the pair's first view
  uint64_t tex[kMaxBatchPairs];  // half2 (a, b)
  DevicePtr<const uint32_t> pair_max;  // per pair: bits of max |value| (the texels' scale)
  int32_t kind;  // the pairs' mirror (symmetry.hpp's MirrorKind), one for the batch
};
// kind 3 (MirrorKind::Plane): each "pair" is one view (a, a) whose texels
// hold rows r and rows-1-r (launch_pack_pairs' flip_rows), and a thread
// updates the planes y and ny-1-y of its column; ny % 32 == 0.

// Voxels per thread along y.
constexpr int kPlanesPerThread = 8;
// The mirror kernel: two lookups per pair and thread, so more planes keep
// as many texture fetches in flight as the quads' four.
constexpr int kPairPlanesPerThread = 16;

// One mirror pair (a, b) for launch_pack_pairs: its windows (`rows` rows,
// the same for both) and angular weights, and where its texels go.
// `max_src`, when set, points at each view's largest |value| over all its
// rows (one float on the device): the pair's scale then comes from the
// whole views, not from the windows, so that a row is packed the same way
// in every window that holds it.
struct PackPair {
  DevicePtr<const float> src[2];
  float scale[2];
  DevicePtr<void> texels;
  int32_t rows;
  DevicePtr<const float> max_src[2];
};

// Mirror pairs packed in one launch (two, with their maxima) rather than
// two launches per pair: 128 launches per group filled the stream's queue
// behind a backprojection and held the filter thread.
struct PackPairBatch {
  int32_t count;
  uint64_t src_pitch;         // floats
  uint64_t dst_pitch;         // texels
  int32_t columns, texture_rows;
  int32_t flip_rows;            // b flipped along rows (rows-1-r), not columns
  DevicePtr<uint32_t> pair_max;     // per pair: bits of max |value|, zeroed beforehand
  PackPair pair[kMaxBatchPairs];
};


// N filtered windows (the same rows) and their angular weights
// (launch_pack_half, launch_window_max).
template <int N>
struct PackArgs {
  DevicePtr<const float> src[N];
  uint64_t src_pitch;
  float scale[N];
};

// The live preview (device_preview.hpp): views accumulated into a coarse
// volume, each read from its filtered pixels (`src`, rows `pitch` floats
// apart) and interpolated in float, as the CPU does, not by the texture
// unit (whose 8-bit weights left the preview 8e-4 from the CPU's).
constexpr int kPreviewBatchViews = 16;
struct PreviewBatch {
  SlabGeometry g;
  int32_t count;
  ViewTerms view[kPreviewBatchViews];  // weight: a_v * sid^2; row_offset 0
  DevicePtr<const float> src[kPreviewBatchViews];
  uint64_t pitch;
};

// The layouts, pinned (the numbers are what GCC, Clang, nvcc and MSVC give
// for x86-64 and what the fatbin was compiled against).
#define FDK_PIN(type, size) static_assert(sizeof(type) == size, #type "'s size changed: the kernels read another layout")
#define FDK_AT(type, field, offset) \
  static_assert(offsetof(type, field) == offset, #type "." #field " moved: the kernels read another layout")
FDK_PIN(ViewTerms, 56);
FDK_PIN(SlabGeometry, 52);
FDK_PIN(GenericBatch, 4152);
FDK_AT(GenericBatch, count, 52);
FDK_AT(GenericBatch, view, 56);
FDK_AT(GenericBatch, tex, 3640);
FDK_PIN(QuadBatch, 2112);
FDK_AT(QuadBatch, view, 56);
FDK_AT(QuadBatch, tex, 1848);
FDK_AT(QuadBatch, quad_max, 2104);
FDK_PIN(PairBatch, 4168);
FDK_AT(PairBatch, tex, 3640);
FDK_AT(PairBatch, pair_max, 4152);
FDK_AT(PairBatch, kind, 4160);
FDK_PIN(PackPair, 56);
FDK_AT(PackPair, scale, 16);
FDK_AT(PackPair, texels, 24);
FDK_AT(PackPair, rows, 32);
FDK_AT(PackPair, max_src, 40);
FDK_PIN(PackPairBatch, 3632);
FDK_AT(PackPairBatch, src_pitch, 8);
FDK_AT(PackPairBatch, dst_pitch, 16);
FDK_AT(PackPairBatch, columns, 24);
FDK_AT(PackPairBatch, flip_rows, 32);
FDK_AT(PackPairBatch, pair_max, 40);
FDK_AT(PackPairBatch, pair, 48);
FDK_PIN(PreviewBatch, 1088);
FDK_AT(PreviewBatch, count, 52);
FDK_AT(PreviewBatch, view, 56);
FDK_AT(PreviewBatch, src, 952);
FDK_AT(PreviewBatch, pitch, 1080);
FDK_PIN(PackArgs<4>, 56);
FDK_PIN(PackArgs<2>, 32);
FDK_PIN(PackArgs<1>, 24);
FDK_AT(PackArgs<4>, scale, 40);

}  // namespace fdk::cuda
