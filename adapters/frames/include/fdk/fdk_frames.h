/*
 * fdk_frames.h — the scanner-side C interface of fdk: a frame-callback
 * adapter between a detector driver and a reconstruction (libfdk_frames).
 *
 * The driver hands over every raw frame as it is read out (uint16 counts or
 * float, with its frame index, encoder angle and timestamp). The adapter
 * copies it into a bounded queue and returns; its own thread then turns the
 * frame into line integrals, p = -log((I - dark) / (flat - dark)) (clamped,
 * bad pixels replaced by their neighbours' mean, optional crop, binning and
 * flips: the same code as fdk-convert, see docs/ADAPTERS.md), and pushes it
 * into the reconstruction (fdk.h). Frames may arrive out of order; a frame
 * index that arrives twice is ignored and counted; frames that never arrive
 * are reported, and the reconstruction uses the frames that did arrive (the
 * angular weights are recomputed from them at finish).
 *
 * Back-pressure: the queue holds `queue_capacity` frames. When it is full,
 * a push waits up to its `timeout_ms` for room; if the queue stays full the
 * push returns FDK_ERROR_BUDGET (the queue is a memory budget) and the frame
 * was NOT taken: the driver decides (retry, slow down, abort). Nothing is
 * ever dropped silently.
 *
 * Conventions are fdk.h's: plain C99, an opaque handle, fdk_status codes,
 * structs that start with their size and are initialised by an _init
 * function, a message for the last error. The library never prints, exits,
 * aborts or throws across this boundary.
 *
 * Threads (which driver thread may call what):
 *   - fdk_frames_push_u16 / fdk_frames_push_f32: any thread, also several
 *     concurrently (one per readout thread); they only copy and queue, and
 *     block only while the queue is full (at most timeout_ms);
 *   - fdk_frames_finish: once, after every push has returned, from any
 *     thread; it blocks until the queued frames are reconstructed;
 *   - fdk_frames_get_stats, fdk_frames_missing, fdk_frames_cancel,
 *     fdk_frames_last_error: any thread, any time (cancel also from a push
 *     that is waiting in another thread);
 *   - fdk_frames_context: any time; use the fdk_context it returns for
 *     progress, the plan, and fdk_read_slab after fdk_frames_finish (never
 *     push to it directly, never fdk_destroy it);
 *   - fdk_frames_destroy: last, not racing any other call on the handle.
 *   The adapter's worker thread calls nothing of the driver's: there are no
 *   callbacks into the driver.
 */
#ifndef FDK_FRAMES_H
#define FDK_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "fdk/fdk.h"

#if defined(_WIN32) || defined(__CYGWIN__)
#  if defined(FDK_FRAMES_BUILDING_LIBRARY)
#    define FDK_FRAMES_API __declspec(dllexport)
#  elif defined(FDK_STATIC)
#    define FDK_FRAMES_API
#  else
#    define FDK_FRAMES_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define FDK_FRAMES_API __attribute__((visibility("default")))
#else
#  define FDK_FRAMES_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fdk_frames fdk_frames;

typedef struct fdk_frames_config {
  uint32_t struct_size;      /* sizeof(fdk_frames_config), set by _init */
  /* The raw frames as the driver delivers them. After crop and binning
     they must have the reconstruction's detector.size. */
  int32_t width, height;
  /* Calibration, width * height floats each, copied at create; NULL for
     none. Without a flat, `i0` is the open-beam intensity; without a dark,
     `dark_level` is the dark. */
  const float* dark;
  const float* flat;
  double dark_level;         /* default 0 */
  double i0;                 /* default 0 (then a flat is required) */
  double min_transmission;   /* clamp of (I - D) / (F - D); default 1e-5 */
  /* Flat pixels not above the dark, saturated (flat_saturation, default
     65535; 0 = none) or not finite become bad pixels; more than this
     fraction of them fails create (a wrong flat). Within [0, 1];
     default 0.01. */
  double max_unusable_fraction;
  double flat_saturation;
  const uint8_t* bad_pixels; /* width * height, nonzero = bad; NULL none */
  int32_t crop[4];           /* x, y, width, height in raw pixels; 0 = all */
  int32_t bin[2];            /* u, v; default 1 */
  int32_t flip_u, flip_v;    /* 1 = mirror the frame along u / v */
  int32_t line_integrals;    /* 1: frames already hold line integrals
                                (no dark, flat or log) */
  int32_t queue_capacity;    /* frames; default 8 */
  /* 1: each frame's encoder angle replaces its view's configured gantry
     angle (the other parameters of the view stay configured).
     0: the frame index alone says which view it is. */
  int32_t use_encoder_angle;
} fdk_frames_config;

/* Defaults as above; returns its argument; NULL-safe. */
FDK_FRAMES_API fdk_frames_config* fdk_frames_config_init(fdk_frames_config* config);

/* Creates the reconstruction (fdk_create with `reconstruction`), the
   correction and the worker thread. Errors: those of fdk_create, and
   INVALID_ARGUMENT for a bad frames configuration or unusable calibration
   (message says which). On failure *out is NULL and
   fdk_frames_last_create_error() describes the problem. */
FDK_FRAMES_API fdk_status fdk_frames_create(const fdk_config* reconstruction,
                                            const fdk_frames_config* frames,
                                            fdk_frames** out);

/* Stops the worker, drops queued frames, releases everything (including
   the fdk_context). NULL-safe. */
FDK_FRAMES_API void fdk_frames_destroy(fdk_frames* frames);

/* Hands over frame `frame_index` (0 <= index < num_views of the
   reconstruction): height rows of width samples, rows `row_pitch_bytes`
   apart. `encoder_angle_deg` is used when use_encoder_angle is set (else
   only recorded); `timestamp_s` is recorded (any clock, seconds). The
   pixels are copied before the call returns.
   timeout_ms: how long to wait for room in a full queue; 0 = not at all,
   negative = as long as it takes.
   Returns OK when the frame was queued, or when it is a duplicate of a
   frame already received (then ignored and counted). A frame counts as
   received once it passed its checks: one refused (a NaN pixel) never
   makes a good copy pushed meanwhile from another thread a duplicate.
   Errors (the frame is not taken): OUT_OF_RANGE (index), INVALID_ARGUMENT
   (NULL; a pitch below a row, or whose (height - 1) * pitch + row
   overflows or exceeds PTRDIFF_MAX; a float sample NaN, Inf or beyond
   [-1e20, 1e20]; an angle or timestamp not finite, or an angle beyond
   [-1e6, 1e6] degrees), BUDGET (the queue stayed full for timeout_ms),
   INVALID_STATE (after finish), CANCELLED, and any error (other than a
   refusal of that frame's data) the reconstruction reported for an
   earlier frame (the adapter stops at the first one; the message names
   that frame). A frame whose data the reconstruction still refuses on the
   adapter's thread goes back to missing (fdk_frames_missing) and may be
   pushed again; the adapter goes on. */
FDK_FRAMES_API fdk_status fdk_frames_push_u16(fdk_frames* frames, int32_t frame_index,
                                              double encoder_angle_deg, double timestamp_s,
                                              const uint16_t* pixels,
                                              size_t row_pitch_bytes, int32_t timeout_ms);
FDK_FRAMES_API fdk_status fdk_frames_push_f32(fdk_frames* frames, int32_t frame_index,
                                              double encoder_angle_deg, double timestamp_s,
                                              const float* pixels, size_t row_pitch_bytes,
                                              int32_t timeout_ms);

/* No more frames: waits until every queued frame is in the reconstruction,
   then calls fdk_finish. Frames that never arrived are left out (see
   fdk_frames_missing). At least one frame must have arrived. */
FDK_FRAMES_API fdk_status fdk_frames_finish(fdk_frames* frames);

/* The reconstruction, owned by `frames`: for fdk_get_progress,
   fdk_get_plan_info, fdk_slab_count, fdk_get_slab_info and fdk_read_slab
   (after fdk_frames_finish). NULL for NULL. */
FDK_FRAMES_API fdk_context* fdk_frames_context(fdk_frames* frames);

typedef struct fdk_frames_stats {
  uint32_t struct_size;        /* set by the caller to sizeof(fdk_frames_stats) */
  int32_t frames_announced;    /* num_views */
  int32_t frames_received;     /* distinct indices taken */
  int32_t frames_reconstructed;/* pushed into the reconstruction */
  int32_t duplicates;          /* ignored repeats */
  int32_t out_of_order;        /* arrived after a higher index */
  /* During acquisition: indices below the highest received that have not
     arrived (late or dropped). After finish: every index that never
     arrived. */
  int32_t missing;
  int32_t queue_capacity;
  int32_t queue_depth;         /* frames waiting now */
  int32_t queue_high_water;    /* most frames ever waiting */
  int32_t queue_full_timeouts; /* pushes refused with FDK_ERROR_BUDGET */
  int32_t bad_pixels;          /* replaced in every frame */
  uint64_t clamped_pixels;     /* total over the frames reconstructed */
  double first_timestamp_s;    /* of the frames received; 0 if none */
  double last_timestamp_s;
} fdk_frames_stats;

FDK_FRAMES_API fdk_status fdk_frames_get_stats(const fdk_frames* frames,
                                               fdk_frames_stats* stats);

/* The missing indices (as in stats.missing), ascending: up to `capacity`
   of them into `indices` (may be NULL when capacity is 0); *count gets how
   many there are in all. */
FDK_FRAMES_API fdk_status fdk_frames_missing(const fdk_frames* frames, int32_t* indices,
                                             int32_t capacity, int32_t* count);

/* Cancels: waiting pushes and finish return FDK_ERROR_CANCELLED, queued
   frames are dropped, the reconstruction is cancelled (fdk_cancel).
   Irreversible. */
FDK_FRAMES_API fdk_status fdk_frames_cancel(fdk_frames* frames);

/* The message of the calling thread's last failed call on `frames` ("" if
   none); valid until that thread's next call into libfdk_frames. */
FDK_FRAMES_API const char* fdk_frames_last_error(const fdk_frames* frames);
/* The message of the calling thread's last failed fdk_frames_create. */
FDK_FRAMES_API const char* fdk_frames_last_create_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FDK_FRAMES_H */
