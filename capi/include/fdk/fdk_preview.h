/* fdk's live preview (added in 0.8): the coarse volume that fdk_config.preview
   reconstructs alongside, and its reads. Part of the C ABI of fdk.h, which
   includes this header; include <fdk/fdk.h>. */
#ifndef FDK_FDK_PREVIEW_H
#define FDK_FDK_PREVIEW_H

#include "fdk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the live preview (added in 0.8) ----------------------------------------- */
/* The default grid (preview_volume all 0) at 1/f of the volume's voxels
   per axis keeps the field: 1024^3 -> 128^3, 256^3 -> 128^3. On a GPU the
   preview lives on the first one, which filters or holds every view.
   With fdk_config.preview = 1 every view is also backprojected, as soon as
   it is filtered, into a coarse volume of its own (preview_volume), which
   may be read at any moment: during the scan, to see that the part is in
   the field of view and the exposure right, and after fdk_finish, before
   any slab of the full volume. Its values are the partial FDK sum divided
   by `coverage`, the views' share of the scan's angular weight, so that
   grey values are comparable to the finished volume's from the first
   quarter of the scan on (the missing angles show as streaks, not as a
   darker volume). Each view counts with its nominal weight (the announced
   angles, all views present): once every announced view is in, as
   announced, the preview equals a reconstruction of its grid from the same
   projections (`complete`). Views missing at fdk_finish, or pushed with
   measured angles, leave it an approximation (complete 0). A view pushed
   again after a failure is not added twice. */

enum {
  FDK_PREVIEW_COMPLETE = 1,  /* every view of the finished scan is in, with
                                its final weight */
  FDK_PREVIEW_FAILED = 2     /* a view could not be added (the GPU that holds
                                the preview failed): reads fail with the
                                reason; the reconstruction goes on */
};

typedef struct fdk_preview_info {
  uint32_t struct_size;   /* sizeof(fdk_preview_info), set by the caller */
  fdk_volume volume;      /* the preview's grid (layout as a slab's: x
                             fastest, then z, then y) */
  int32_t views;          /* views in it */
  int32_t views_announced;
  double coverage;        /* the views' share of the angular weight, in
                             [0, 1]; the sum was divided by it (0: none yet,
                             the values are 0) */
  uint32_t flags;         /* FDK_PREVIEW_* */
  int32_t on_gpu;         /* 1: accumulated on a GPU, 0: on the CPU */
  uint64_t memory_bytes;  /* what it holds (on that GPU, or in host memory,
                             counted in the host budget) */
} fdk_preview_info;

/* Sets struct_size and zeroes the rest; returns its argument (NULL-safe). */
FDK_API fdk_preview_info* fdk_preview_info_init(fdk_preview_info* info);

/* The preview's grid and state. Errors: INVALID_ARGUMENT (NULL),
   STRUCT_SIZE, INVALID_STATE (preview was 0). */
FDK_API fdk_status fdk_get_preview_info(fdk_context* ctx, fdk_preview_info* info);

/* The whole preview volume into `buffer` (at least x * y * z * 4 bytes of
   info.volume), and its state at that moment into `info` (may be NULL).
   Any time after fdk_create, from any thread, also while another thread
   pushes (a read waits at most for the view being added) and from a
   progress callback; never waits for a push, finish or slab read. Errors:
   INVALID_ARGUMENT (NULL, buffer too small), STRUCT_SIZE, INVALID_STATE
   (preview was 0), DEVICE (the GPU holding it failed; the volume itself is
   unaffected). */
FDK_API fdk_status fdk_read_preview(fdk_context* ctx, float* buffer, size_t buffer_bytes,
                                    fdk_preview_info* info);

/* Three orthogonal slices of one moment of the preview, through voxel `at`
   (x, y, z indices; -1 = the middle of that axis). Each pointer may be
   NULL (that slice is not wanted); each buffer's bytes are checked:
     x_slice: plane x = at[0], z fastest then y: size z * size y floats;
     y_slice: plane y = at[1], x fastest then z: size x * size z floats
              (an axial slice: y is the rotation axis);
     z_slice: plane z = at[2], x fastest then y: size x * size y floats.
   Thread rules as fdk_read_preview. */
typedef struct fdk_preview_slices {
  uint32_t struct_size;   /* sizeof(fdk_preview_slices), set by the caller */
  int32_t at[3];
  float* x_slice;
  size_t x_slice_bytes;
  float* y_slice;
  size_t y_slice_bytes;
  float* z_slice;
  size_t z_slice_bytes;
} fdk_preview_slices;

/* Errors as fdk_read_preview, and OUT_OF_RANGE (an `at` outside the grid). */
FDK_API fdk_status fdk_read_preview_slices(fdk_context* ctx, const fdk_preview_slices* slices,
                                           fdk_preview_info* info);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FDK_FDK_PREVIEW_H */
