/*
 * fdk.h — the public C interface of fdk, a cone-beam CT reconstruction
 * library (Feldkamp–Davis–Kress).
 *
 * This is the only public header. It is plain C99 and C++ compatible, and its
 * application binary interface is stable within a major version:
 *   - status codes are pinned and never renumbered;
 *   - every configuration struct starts with its own size (`struct_size`), so
 *     fields can be appended in later minor versions without breaking callers
 *     compiled against this one: always initialise a struct with its
 *     `fdk_*_init` function before setting fields;
 *   - the library never prints, exits, aborts, throws across this boundary or
 *     resets a CUDA device: every failure is a status code plus a message.
 *
 * Geometry (RTK's ThreeDCircularProjectionGeometry, IEC 61217):
 *   The fixed frame has its origin at the isocentre and the rotation axis is y.
 *   At gantry angle 0 the source sits on +z at distance SID from the
 *   isocentre, and the flat detector is normal to z with its u axis along +x
 *   and its v axis along +y. Per view: gantry angle (rotation about y),
 *   out-of-plane angle (about x), in-plane angle (about z), all in degrees;
 *   SID and SDD; source offset (x, y) and projection offset (x, y), as
 *   defined by RTK. The same projections and geometry give the same volume as
 *   RTK's `rtkfdk`.
 *
 * Units: every length (spacing, origin, distances, offsets) is in the same
 *   unit, normally millimetres. Projections are line integrals of the
 *   attenuation coefficient (i.e. -log(I/I0)), so the volume comes out in
 *   1/unit: with millimetres and line integrals in mm^-1·mm the voxels hold
 *   mm^-1.
 *
 * Images follow ITK: pixel or voxel index i maps to the physical coordinate
 *   origin + i * spacing (the origin is the centre of the first pixel/voxel;
 *   no direction cosines).
 *
 * Memory layouts:
 *   - a projection is `detector.size[1]` rows of `detector.size[0]` float32
 *     pixels; row j (v index j) starts `j * row_pitch_bytes` bytes after the
 *     first pixel;
 *   - the volume is x fastest, then z, then y: voxel (x, y, z) is at
 *     ((y * size_z) + z) * size_x + x. A y-slab [y0, y1) is one contiguous
 *     block of (y1 - y0) * size_z * size_x floats, and each y plane is one
 *     axial slice image (x across, z down).
 *
 * Threads:
 *   - calls on different handles never interfere;
 *   - on one handle, every function may be called from any thread and calls
 *     are serialised internally, except as noted: `fdk_cancel`,
 *     `fdk_get_progress` and the slab queries never wait for a push, a
 *     finish or a slab computation in progress;
 *   - the supported concurrent pattern is: one acquisition thread pushes
 *     projections and calls `fdk_finish`, while another thread queries
 *     progress, cancels, and reads slabs once `fdk_finish` has returned;
 *   - `fdk_destroy` must not race with any other call on the same handle.
 *
 * Ownership: the library copies everything it is given (configuration arrays,
 *   projections) before the call returns; the caller owns every buffer it
 *   passes. Strings returned by the library are owned by it (see each one).
 */
#ifndef FDK_FDK_H
#define FDK_FDK_H

#include <stddef.h>
#include <stdint.h>

/* ---- export macros -------------------------------------------------------- */
#if defined(_WIN32) || defined(__CYGWIN__)
#  if defined(FDK_BUILDING_LIBRARY)
#    define FDK_API __declspec(dllexport)
#  elif defined(FDK_STATIC)
#    define FDK_API
#  else
#    define FDK_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define FDK_API __attribute__((visibility("default")))
#else
#  define FDK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version -------------------------------------------------------------- */
#define FDK_VERSION_MAJOR 0
#define FDK_VERSION_MINOR 9
#define FDK_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH, comparable with fdk_version(). */
#define FDK_VERSION_NUMBER \
  (FDK_VERSION_MAJOR * 10000 + FDK_VERSION_MINOR * 100 + FDK_VERSION_PATCH)

/* The version of the library actually loaded, as FDK_VERSION_NUMBER. */
FDK_API unsigned fdk_version(void);
/* "MAJOR.MINOR.PATCH"; static storage. */
FDK_API const char* fdk_version_string(void);

/* ---- status codes (pinned: never renumbered) ------------------------------ */
typedef enum fdk_status {
  FDK_OK = 0,
  FDK_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, bad size or value, NaN/Inf */
  FDK_ERROR_OUT_OF_RANGE = 2,     /* an index outside its valid range */
  FDK_ERROR_INVALID_STATE = 3,    /* a call in the wrong order */
  FDK_ERROR_DUPLICATE = 4,        /* a projection index pushed twice */
  FDK_ERROR_BUDGET = 5,           /* a memory budget too small for the plan */
  FDK_ERROR_OUT_OF_MEMORY = 6,    /* an allocation failed */
  FDK_ERROR_BACKEND_UNAVAILABLE = 7, /* the requested backend/device is absent */
  FDK_ERROR_DEVICE = 8,           /* a GPU/driver failure; message names it */
  FDK_ERROR_CANCELLED = 9,        /* fdk_cancel was called */
  FDK_ERROR_UNSUPPORTED = 10,     /* a valid request this build cannot do */
  FDK_ERROR_STRUCT_SIZE = 11,     /* struct_size unknown: init the struct */
  FDK_ERROR_INTERNAL = 12         /* a bug: please report the message */
} fdk_status;

/* A constant English name for a status ("FDK_ERROR_BUDGET: ..."); never NULL. */
FDK_API const char* fdk_status_string(fdk_status status);

/* ---- enumerations ---------------------------------------------------------- */
typedef enum fdk_window {
  FDK_WINDOW_RAM_LAK = 0, /* plain ramp, cut at `cutoff` */
  FDK_WINDOW_SHEPP_LOGAN = 1,
  FDK_WINDOW_COSINE = 2,
  FDK_WINDOW_HAMMING = 3,
  FDK_WINDOW_HANN = 4
} fdk_window;

typedef enum fdk_switch {
  FDK_AUTO = 0, /* decided from the geometry */
  FDK_ON = 1,
  FDK_OFF = 2
} fdk_switch;

/* What a voxel outside the field of view holds. The field of view is what
   every (untilted) view measures: voxels that some views miss, such as a
   cube's corners beyond the circle the detector's width sweeps, get only
   part of the sum. */
typedef enum fdk_outside_fov {
  FDK_OUTSIDE_FOV_BACKPROJECT = 0, /* the partial sum of the views that see
                                      it, as RTK's rtkfdk (the default) */
  FDK_OUTSIDE_FOV_ZERO = 1         /* 0, and not computed (faster) */
} fdk_outside_fov;

/* What the store does when the compressed projections would outgrow the
   host budget (docs/DECISIONS.md, "A store that fits"). */
typedef enum fdk_store_policy {
  FDK_STORE_REDUCE_PRECISION = 0, /* the default: while the views still to
                                     come would not fit at float32 (at the
                                     ratio measured so far), each is stored
                                     as float16, with fdk_store_info's
                                     bounds; a view fails with BUDGET only
                                     when even that leaves no room */
  FDK_STORE_STRICT = 1            /* never reduce: a view that does not fit
                                     fails with BUDGET */
} fdk_store_policy;

/* Whether the announced scan fits the store (fdk_plan_info.store_fit). */
typedef enum fdk_store_fit {
  FDK_STORE_FITS = 0,     /* for certain: every view's worst case fits (at
                             float16 under FDK_STORE_REDUCE_PRECISION) */
  FDK_STORE_LIKELY = 1,   /* at the compression ratio typical of noisy
                             filtered projections (1.2 for float32, 2.4
                             for float16) */
  FDK_STORE_UNLIKELY = 2  /* not even then: expect BUDGET before the end
                             unless fewer views arrive */
} fdk_store_fit;

typedef enum fdk_backend {
  FDK_BACKEND_AUTO = 0, /* CUDA when built in and a GPU is usable, else CPU */
  FDK_BACKEND_CPU = 1,
  FDK_BACKEND_CUDA = 2
} fdk_backend;

typedef enum fdk_precision {
  FDK_PRECISION_FLOAT32 = 0, /* filtered projections stored bit-exact */
  FDK_PRECISION_FLOAT16 = 1  /* half the memory; error bound in fdk_store_info */
} fdk_precision;

typedef enum fdk_scan_kind {
  /* `num_views` views, gantry angle first_angle + i * arc / num_views, with
     the shared sid/sdd and offsets of `uniform`. */
  FDK_SCAN_UNIFORM = 0,
  /* One fdk_view per view in `views`. */
  FDK_SCAN_VIEWS = 1,
  /* One 3x4 projection matrix per view in `matrices` (row-major, 12 doubles
     a view), mapping homogeneous physical (x, y, z, 1) to physical detector
     coordinates (u*w, v*w, w) exactly as RTK's GetMatrices(); it must be a
     flat-panel perspective matrix (RTK's form, square pixels, no skew). */
  FDK_SCAN_MATRICES = 2
} fdk_scan_kind;

/* ---- geometry -------------------------------------------------------------- */

/* One view in RTK's circular parameters. Every value finite and within its
   range (bounds no scanner reaches in any usual length unit, which keep the
   geometry's arithmetic finite; a value outside is INVALID_ARGUMENT naming
   the field, the view and the range): angles within [-1e6, 1e6] degrees,
   SID and SDD within [1e-6, 1e9] with SDD / SID within [1e-3, 1e6],
   offsets within [-1e9, 1e9]. A view decomposed from a projection matrix
   takes the same ranges. */
typedef struct fdk_view {
  double gantry_angle_deg;
  double sid;                  /* source to isocentre distance, > 0 */
  double sdd;                  /* source to detector distance, > 0 */
  double source_offset_x;
  double source_offset_y;
  double projection_offset_x;
  double projection_offset_y;
  double in_plane_angle_deg;
  double out_of_plane_angle_deg;
} fdk_view;

typedef struct fdk_volume {
  int32_t size[3];    /* voxels along x, y, z; each within [1, 65536] */
  double spacing[3];  /* within [1e-6, 1e6] */
  double origin[3];   /* centre of voxel (0,0,0); within [-1e9, 1e9] */
} fdk_volume;

typedef struct fdk_detector {
  int32_t size[2];    /* columns (u) and rows (v); each within [2, 65536] */
  double spacing[2];  /* within [1e-6, 1e6] */
  double origin[2];   /* centre of pixel (0,0) in detector coordinates;
                         within [-1e9, 1e9] */
} fdk_detector;

typedef struct fdk_scan {
  uint32_t struct_size; /* sizeof(fdk_scan), set by fdk_scan_init */
  int32_t kind;         /* fdk_scan_kind */
  int32_t num_views;    /* views announced; fewer may arrive (fdk_finish) */
  /* FDK_SCAN_UNIFORM: */
  double first_angle_deg; /* within [-1e6, 1e6] */
  double arc_deg;       /* signed, non-zero, within [-360, 360]; 360 for a
                           full scan; angle step arc/num_views */
  fdk_view uniform;     /* sid, sdd, offsets, tilts shared by all views
                           (its gantry_angle_deg is ignored) */
  /* FDK_SCAN_VIEWS: num_views entries; copied by fdk_create. */
  const fdk_view* views;
  /* FDK_SCAN_MATRICES: 12 * num_views doubles; copied by fdk_create. */
  const double* matrices;
} fdk_scan;

/* ---- configuration --------------------------------------------------------- */
#define FDK_MAX_DEVICES 16

typedef struct fdk_config {
  uint32_t struct_size;  /* sizeof(fdk_config), set by fdk_config_init */
  fdk_volume volume;
  fdk_detector detector;
  fdk_scan scan;

  /* Filtering. */
  int32_t window;        /* fdk_window; default Ram-Lak */
  double cutoff;         /* fraction of Nyquist in (0, 1]; default 1 */
  int32_t short_scan;    /* fdk_switch: Parker weights; AUTO = when the views
                            cover less than a full turn */
  int32_t offset_detector; /* fdk_switch: half-fan weights (Wang's, as
                            rtkfdk's), centred on the axis ray. AUTO =
                            rtkfdk's rule for a full turn: on when the rays
                            through the detector's first and last pixel
                            centres pass at distances from the axis (the
                            smallest over the views) that differ by 10 %
                            of their mean or more (fdk_plan_info.half_fan_*)
                            and the axis ray meets the detector (forced ON
                            without it: INVALID_ARGUMENT). A short scan
                            stays off on AUTO (rtkfdk multiplies Parker's
                            weights by them: ON) */
  double truncation_padding; /* extend each row on both sides by this
                            fraction of its width with edge values fading
                            to zero (cosine taper); 0 = off; within [0, 1] */

  /* Execution. */
  int32_t backend;       /* fdk_backend */
  int32_t num_devices;   /* 0 = every usable GPU; else the first entries of
                            `devices` (CUDA ordinals). A resident volume is
                            split in y over them, streamed slabs are shared
                            out; the volume is the same bits on any number.
                            A GPU that fails is left out (fdk_device_stats) */
  int32_t devices[FDK_MAX_DEVICES];
  uint64_t host_memory_budget; /* bytes for store + slab cache + work
                            buffers; 0 = half of the physical memory */
  uint64_t gpu_memory_budget;  /* bytes per GPU; 0 = 90% of its free memory */
  int32_t precision;     /* fdk_precision of the stored filtered projections */
  int32_t num_threads;   /* CPU threads for filtering, compression and the CPU
                            backprojector; 0 = hardware concurrency; within
                            [0, 1024] */
  int32_t slab_thickness;/* y planes per slab; 0 = chosen from the budgets;
                            >= 0 (more than the volume's planes = one slab) */

  /* Appended in 0.2 (a 0.1 caller's struct_size, without it, still works
     and gets the default): */
  int32_t outside_fov;   /* fdk_outside_fov; default BACKPROJECT, as rtkfdk */
  /* Appended in 0.3 (older struct sizes still work and get the default): */
  int32_t store_policy;  /* fdk_store_policy; default REDUCE_PRECISION */
  /* Appended in 0.5 (older struct sizes still work and get the default): */
  double hann_cutoff_v;  /* rtkfdk's --hannY: a Hann window along the
                            detector's v axis (columns smoothed, as RTK's
                            2-D kernel), cut at this fraction of Nyquist
                            exactly as RTK rounds it; 0 = off (the
                            default); within [0, 1] */
  /* Appended in 0.7 (older struct sizes still work and get the default): */
  int32_t estimate_geometry; /* 1: keep, as views are pushed, what
                            fdk_get_geometry_estimate needs (some rows of
                            each view, every row binned, allocated at
                            fdk_create, counted in the host budget);
                            0 = off (the default). Not under libfdk_mpi. */
  /* Appended in 0.8 (older struct sizes still work and get the default): */
  int32_t preview;       /* 1: a coarse preview volume reconstructed
                            alongside, readable at any time (fdk_preview.h);
                            0 = off (the default). Not under libfdk_mpi. */
  fdk_volume preview_volume; /* its grid; all sizes 0 = the volume's field
                            at 1/f of its voxels per axis, f >= 2 the
                            smallest factor leaving every axis at most 128
                            voxels. Otherwise checked as `volume`. */
} fdk_config;

/* Fill with struct_size and defaults (everything zero except: window Ram-Lak,
   cutoff 1, switches AUTO, backend AUTO, precision float32, outside_fov
   BACKPROJECT, scan kind UNIFORM with arc 360). Returns its argument;
   NULL-safe.
   fdk_config grows at the end from version to version, so the library must
   not write more of it than the caller's header declared: call
   fdk_config_init(config) as written, a macro that passes
   sizeof(fdk_config) to fdk_config_init_sized. That writes exactly
   struct_size bytes when struct_size is this header's size or an older
   version's (0.1, 0.2, 0.4, 0.5/0.6, 0.7 layouts); any other size writes
   nothing and returns NULL (a header newer than the library: fdk_create
   would refuse it). The function fdk_config_init itself, which programs
   built against 0.6 or older headers call, writes the 0.5/0.6 layout (384
   bytes on LP64) and sets that struct_size. Added in 0.7. */
FDK_API fdk_config* fdk_config_init_sized(fdk_config* config, size_t struct_size);
FDK_API fdk_config* fdk_config_init(fdk_config* config);
#define fdk_config_init(config) fdk_config_init_sized((config), sizeof(fdk_config))
FDK_API fdk_scan* fdk_scan_init(fdk_scan* scan);

/* ---- lifetime ------------------------------------------------------------- */
typedef struct fdk_context fdk_context;

/* Validates the configuration, plans the slabs and picks the backend. A
   value outside its documented range (NaN and Inf included) fails with
   FDK_ERROR_INVALID_ARGUMENT and a message naming the field, its value and
   the range. An infeasible plan fails here with FDK_ERROR_BUDGET, before
   any work: a host budget whose half cannot hold the per-view bookkeeping
   of num_views (a few hundred bytes a view), or which leaves the store less
   than one projection's worst case after the slabs' reserve. On failure
   *out is NULL and fdk_last_create_error()
   describes the problem. */
FDK_API fdk_status fdk_create(const fdk_config* config, fdk_context** out);
/* Releases everything; NULL-safe. A call in progress on the handle in
   another thread (a push waiting for a staging slot, a slab read) is
   cancelled and waited for: it returns FDK_ERROR_CANCELLED, then the handle
   is freed. Calls that begin once fdk_destroy has started return
   FDK_ERROR_INVALID_STATE until it frees the handle. From the handle's own
   progress callback fdk_destroy does nothing (the call that invoked the
   callback is still running) and fdk_last_error says so.
   Destroyed handles: the library keeps the set of live handles (one
   mutex-guarded lookup per call). fdk_destroy of a pointer that is not a
   live handle (destroyed already, or never returned by fdk_create) does
   nothing; every other function given one returns
   FDK_ERROR_INVALID_ARGUMENT ("not a live fdk handle: destroyed or never
   created"), the message read with fdk_last_create_error() on the calling
   thread (fdk_last_error of that pointer gives the same). The limit: an
   address that a later fdk_create happens to reuse is that later handle,
   and cannot be told from the destroyed one. */
FDK_API void fdk_destroy(fdk_context* ctx);

/* ---- errors --------------------------------------------------------------- */
/* The message of the last failed call on this handle ("" if none), from
   whichever thread made it. The string is a copy for the calling thread,
   owned by the library: valid until this thread's next fdk_last_error
   (whatever the handle), whatever other threads do meanwhile. Safe from
   any thread while others call the API on the handle (not while it is
   destroyed). NULL ctx gives "". */
FDK_API const char* fdk_last_error(const fdk_context* ctx);
/* The message of the last failed fdk_create (or init-free call without a
   handle) on the calling thread; thread-local storage. */
FDK_API const char* fdk_last_create_error(void);

/* ---- acquisition ------------------------------------------------------------ */
/* Pushes view `index` (0 <= index < num_views): detector.size[1] rows of
   detector.size[0] float32 line integrals, rows `row_pitch_bytes` apart
   (>= 4 * detector.size[0], a multiple of 4, and small enough that the
   last row, (size[1] - 1) * row_pitch_bytes + 4 * size[0] bytes from
   `pixels`, lies within PTRDIFF_MAX bytes and the address space). `view` may be NULL (the
   configured geometry of that view) or give this view's measured geometry,
   which then replaces the configured one (same detector; the redundancy
   weighting stays the one chosen from the configuration).
   The pixels are checked and copied before the call returns, so `pixels`
   can be reused at once; weighting, filtering and compression into the
   store continue on the library's threads while the next view arrives (a
   push waits only when every staging slot is busy). Near the host budget a
   push waits until its view is stored, so BUDGET is reported by the push
   that would overflow. Failures after a push returned (device error, out
   of memory) are reported by the next fdk_push_projection or fdk_finish,
   every one of them, once: "projection N was not stored: ..." or
   "projections N, M and K were not stored: ...". Such a view is then
   FDK_VIEW_FAILED (fdk_get_view_state) and may be pushed again, and the
   call that reported it did nothing else.
   Errors: INVALID_ARGUMENT (NULL, bad pitch, a NaN/Inf pixel or one
   beyond [-1e20, 1e20], a view value outside its range (see fdk_view)),
   OUT_OF_RANGE (index), DUPLICATE (index already pushed), INVALID_STATE
   (after fdk_finish), BUDGET (the store would outgrow the host budget),
   CANCELLED. On any error this view is not stored and the handle stays
   usable. */
FDK_API fdk_status fdk_push_projection(fdk_context* ctx, int32_t index,
                                       const float* pixels,
                                       size_t row_pitch_bytes,
                                       const fdk_view* view);

/* No more projections: waits until every pushed view is stored. Fewer than
   announced is legal: the angular weights are recomputed from the views that
   arrived. At least one view must have arrived (else INVALID_STATE). Calling
   it twice is INVALID_STATE. Failures of pushed views not yet reported (see
   fdk_push_projection) fail this call instead; it may then be called
   again, with or without pushing those views again: the volume is then
   reconstructed without the views left FDK_VIEW_FAILED. A failed call
   changes nothing: pushes may go on. */
FDK_API fdk_status fdk_finish(fdk_context* ctx);

/* Where a view stands. */
typedef enum fdk_view_state {
  FDK_VIEW_ABSENT = 0,  /* not pushed, or its push returned an error */
  FDK_VIEW_PENDING = 1, /* accepted; being filtered and stored */
  FDK_VIEW_STORED = 2,  /* in the reconstruction */
  FDK_VIEW_FAILED = 3   /* accepted, then lost in the background (reported
                           once by a later push or fdk_finish); may be
                           pushed again */
} fdk_view_state;

/* The fdk_view_state of view `index` and, for a FAILED view, the status that
   lost it (else FDK_OK; `failure` may be NULL). Safe from any thread and
   from a progress callback. Added in 0.3. */
FDK_API fdk_status fdk_get_view_state(const fdk_context* ctx, int32_t index,
                                      int32_t* state, int32_t* failure);

/* ---- the volume, slab by slab ----------------------------------------------- */
typedef struct fdk_slab_info {
  uint32_t struct_size; /* set by the caller to sizeof(fdk_slab_info) */
  int32_t y_begin;      /* first y plane */
  int32_t y_end;        /* one past the last */
  uint64_t byte_size;   /* (y_end - y_begin) * size_z * size_x * 4 */
} fdk_slab_info;

/* Available right after fdk_create (the plan is fixed there). */
FDK_API fdk_status fdk_slab_count(const fdk_context* ctx, int32_t* count);
FDK_API fdk_status fdk_get_slab_info(const fdk_context* ctx, int32_t slab,
                                     fdk_slab_info* info);

/* Copies slab `slab` (layout above) into `buffer` of `buffer_bytes` (at
   least its byte_size). Only after fdk_finish; from any thread (not only the
   one that pushed). Slabs may be read in any order and more than once.
   Blocking: a slab that is not ready (see fdk_slab_ready) is computed
   before the call returns (or, when the background is computing it, the
   call waits for that computation); reads that compute are serialised with
   each other and with pushes and fdk_finish. A ready slab is copied at once,
   without waiting for a computation in progress on another thread. To read
   without blocking, poll fdk_slab_ready and read once it says 1.
   Memory: computed slabs are kept in a host cache within what the store
   leaves of the host budget; a slab already read may be evicted to make
   room and is recomputed (the same bytes) when read again. */
FDK_API fdk_status fdk_read_slab(fdk_context* ctx, int32_t slab, float* buffer,
                                 size_t buffer_bytes);

/* The way not to block on a slab. Never waits for a push, finish or slab
   computation in progress, and may be called from any thread, also while
   another thread is inside fdk_read_slab. Writes 1 to *ready when
   fdk_read_slab(slab) would not wait for a computation (the slab is
   computed: on a GPU, or in the host slab cache), else 0 and asks for the
   slab to be computed in the background so that a later call finds it
   ready: poll it, and read when it says 1.
   Background computation (when the slab is not held on a GPU): one library
   thread computes the requested slabs one at a time, oldest request first,
   each into the host slab cache, and only while no fdk_read_slab waits to
   compute. A slab computed this way keeps its room until it has been read:
   while such slabs fill what the budget leaves the cache, further requests
   wait for reads. A slab larger than what the store leaves of the host
   budget for the cache is never computed ahead and never becomes ready:
   fdk_read_slab computes it (blocking). A background computation that
   failed (e.g. OUT_OF_MEMORY) is reported once, by the next fdk_slab_ready
   of that slab, which then returns that status; a later call requests the
   slab again. Slabs computed in the background count in
   fdk_progress.slabs_done; the progress callback reports them when they are
   first read (it is never called on a library thread).
   Errors: INVALID_ARGUMENT (ctx or ready NULL), INVALID_STATE (before
   fdk_finish), OUT_OF_RANGE (slab), CANCELLED; *ready is 0 after an error
   (when ready is not NULL). */
FDK_API fdk_status fdk_slab_ready(fdk_context* ctx, int32_t slab,
                                  int32_t* ready);

/* ---- progress and cancellation ----------------------------------------------- */
typedef enum fdk_phase {
  FDK_PHASE_ACQUIRING = 0,      /* projections arriving */
  FDK_PHASE_RECONSTRUCTING = 1, /* after fdk_finish, slabs being computed */
  FDK_PHASE_DONE = 2,           /* every slab computed at least once */
  FDK_PHASE_CANCELLED = 3
} fdk_phase;

typedef struct fdk_progress {
  uint32_t struct_size; /* set by the caller to sizeof(fdk_progress) */
  int32_t phase;        /* fdk_phase */
  int32_t views_pushed;
  int32_t views_total;  /* announced */
  int32_t slabs_done;   /* slabs computed at least once */
  int32_t slabs_total;
  /* Appended in 0.5 (an older struct_size gets the fields above only): the
     backprojection's work in (view x y plane) units, which moves while a
     slab is computed (by batches of views), also on a volume resident on
     the GPUs that is backprojected as views arrive (counted as the GPUs
     complete each launch, not as views are queued). total = views x the
     volume's y planes: the announced views until fdk_finish, the views
     that arrived after it. done counts each plane's views once (a slab
     recomputed after eviction adds nothing), never exceeds total, equals
     it once every slab has been computed, and never decreases (but for a
     resident volume's views lost after they were counted: FDK_VIEW_FAILED,
     which leave the total at fdk_finish). */
  int64_t backprojection_done;
  int64_t backprojection_total;
} fdk_progress;

/* Called on the caller's thread that made the progress (the pushing thread
   after each projection accepted, the finishing thread, the thread reading
   a slab after each slab computed), never on a library thread. It
   must return quickly. On the same handle it may call the queries
   (fdk_get_progress, fdk_get_store_info, fdk_get_plan_info, fdk_slab_count,
   fdk_get_slab_info, fdk_last_error), fdk_set_progress_callback and
   fdk_cancel; fdk_push_projection, fdk_finish, fdk_read_slab,
   fdk_slab_ready, fdk_get_timings and fdk_get_device_stats return
   FDK_ERROR_INVALID_STATE there (they would wait for the call that invoked
   the callback), and fdk_destroy does nothing. */
typedef void (*fdk_progress_fn)(void* user_data, const fdk_progress* progress);

/* Replaces the callback (NULL removes it). */
FDK_API fdk_status fdk_set_progress_callback(fdk_context* ctx,
                                             fdk_progress_fn callback,
                                             void* user_data);
FDK_API fdk_status fdk_get_progress(const fdk_context* ctx,
                                    fdk_progress* progress);

/* Stops the reconstruction: a push, finish or slab computation in progress
   returns FDK_ERROR_CANCELLED as soon as it notices, and so does every later
   one. Safe from any thread, including a progress callback. Irreversible:
   only queries and fdk_destroy remain useful. */
FDK_API fdk_status fdk_cancel(fdk_context* ctx);

/* ---- introspection ------------------------------------------------------------ */
typedef struct fdk_store_info {
  uint32_t struct_size;     /* set by the caller to sizeof(fdk_store_info) */
  int32_t views_stored;     /* in the store now; pushed views may still be on
                               their way until fdk_finish has returned. A
                               volume resident on the GPU never reads the
                               store: it is filled after fdk_finish, between
                               and after slab reads. */
  uint64_t raw_bytes;       /* filtered projections as float32 */
  uint64_t stored_bytes;    /* in host memory: compressed when the scan
                               would not fit its host budget uncoded, else
                               byte-shuffled as is (ratio 1, or 2 at
                               float16) */
  double ratio;             /* raw_bytes / stored_bytes (0 when empty) */
  /* float16 storage: |stored - exact| <= rel_error_bound * |exact| +
     abs_error_bound_factor * (largest |value| in the same row band);
     both 0 for float32. */
  double rel_error_bound;
  double abs_error_bound_factor;
  /* Appended in 0.3 (an older struct_size gets the fields above only): */
  int32_t views_reduced;    /* views stored as float16 by
                               FDK_STORE_REDUCE_PRECISION (the bounds above
                               then hold for them; float32 views are exact) */
} fdk_store_info;

FDK_API fdk_status fdk_get_store_info(const fdk_context* ctx,
                                      fdk_store_info* info);

typedef struct fdk_plan_info {
  uint32_t struct_size;     /* set by the caller to sizeof(fdk_plan_info) (or
                               the 0.1 size) */
  int32_t backend;          /* fdk_backend actually used (CPU or CUDA) */
  int32_t num_slabs;
  int32_t slab_thickness;   /* planes of every slab but maybe the last */
  int32_t short_scan;       /* 1 if Parker weights are applied */
  int32_t offset_detector;  /* 1 if half-fan weights are applied */
  int32_t num_threads;
  uint64_t host_memory_budget; /* the effective budgets, in bytes */
  uint64_t gpu_memory_budget;
  /* Appended in 0.2 (a 0.1 caller's smaller struct_size gets the fields
     above only): */
  int32_t outside_fov;      /* fdk_outside_fov in use */
  uint64_t voxels_outside_fov; /* voxels outside the field of view of the
                               announced untilted views (zeroed only with
                               FDK_OUTSIDE_FOV_ZERO) */
  /* The half-fan rule's figures: the signed distances from the rotation
     axis of the rays through the detector's first (inferior, < 0 when the
     axis ray is on the detector) and last pixel centres, the smallest in
     size over the views (length units): the field of view's radius on each
     side. The detector counts as displaced when 200 * |inferior +
     superior| >= 10 * (superior - inferior). */
  double half_fan_inferior;
  double half_fan_superior;
  /* Appended in 0.3 (an older struct_size gets the fields above only): */
  int32_t store_policy;     /* fdk_store_policy in use */
  int32_t store_fit;        /* fdk_store_fit of the announced views */
  uint64_t store_limit;     /* bytes the compressed store may hold: the host
                               budget less the slabs' reserve and the
                               per-view bookkeeping */
} fdk_plan_info;

FDK_API fdk_status fdk_get_plan_info(const fdk_context* ctx,
                                     fdk_plan_info* info);

/* Where the time went, accumulated since fdk_create (seconds). Waits for a
   push, finish or slab computation (a read's or a background one, see
   fdk_slab_ready) in progress on another thread. */
typedef struct fdk_timings {
  uint32_t struct_size;       /* set by the caller to sizeof(fdk_timings) */
  double filter_seconds;      /* weighting + ramp filter, uploads included (wall,
                                 summed over the GPUs that filter at once) */
  double store_seconds;       /* compression into the store (wall) */
  double backproject_seconds; /* CUDA: kernel time from device events; CPU:
                                 wall time of the backprojector */
  double upload_seconds;      /* CUDA streaming: row-window decompression and
                                 upload, outside kernels (wall) */
  double download_seconds;    /* slabs copied to host memory (wall) */
} fdk_timings;

FDK_API fdk_status fdk_get_timings(const fdk_context* ctx, fdk_timings* timings);

/* Per GPU, in the order the reconstruction uses them (that of
   fdk_config.devices, or ordinals 0.. when num_devices was 0). */
typedef struct fdk_device_stats {
  uint32_t struct_size;  /* set by the caller to sizeof(fdk_device_stats) */
  int32_t num_devices;   /* GPUs in use; 0 on the CPU backend */
  int32_t ordinal[FDK_MAX_DEVICES];      /* CUDA device ordinal */
  double busy_seconds[FDK_MAX_DEVICES];  /* backprojection kernel time (device
                                            events) */
  int32_t slabs_computed[FDK_MAX_DEVICES]; /* slab computations from the
                                            store (streaming), repeats included */
  int32_t failed[FDK_MAX_DEVICES];       /* 1 once the GPU failed and its work
                                            went to the others */
} fdk_device_stats;

/* Any time after fdk_create; waits for a push, finish or slab computation
   in progress on another thread. Errors: INVALID_ARGUMENT (NULL),
   STRUCT_SIZE. */
FDK_API fdk_status fdk_get_device_stats(const fdk_context* ctx,
                                        fdk_device_stats* stats);

/* ---- the backends this library offers ------------------------------------ */
/* What code a GPU runs of this library (pinned values). */
typedef enum fdk_gpu_code {
  FDK_GPU_CODE_NONE = 0, /* none: this build has no code for the GPU (too
                            old an architecture), or the query failed; the
                            CUDA backend does not use it */
  FDK_GPU_CODE_SASS = 1, /* machine code compiled for its architecture: the
                            code the benchmarks measured */
  FDK_GPU_CODE_JIT = 2   /* PTX compiled by the driver at first use: a GPU
                            newer than the build; it runs, untuned, and the
                            first use pays the compilation */
} fdk_gpu_code;

#define FDK_MAX_GPU_ARCHS 16

/* Added in 0.4. */
typedef struct fdk_backend_info {
  uint32_t struct_size;     /* set by the caller to sizeof(fdk_backend_info) */
  int32_t cuda_built;       /* 1 when this library has the CUDA backend */
  int32_t cuda_usable;      /* 1 when FDK_BACKEND_AUTO would take CUDA: a
                               recent enough driver and a GPU with code
                               (below) */
  int32_t num_sass;         /* architectures with machine code in the build */
  int32_t sass[FDK_MAX_GPU_ARCHS]; /* e.g. 90 for sm_90, ascending */
  int32_t ptx;              /* newest PTX carried (90 for compute_90), 0: none */
  int32_t num_devices;      /* CUDA devices visible; the first
                               FDK_MAX_DEVICES are described */
  int32_t compute_capability[FDK_MAX_DEVICES]; /* major * 10 + minor */
  int32_t code[FDK_MAX_DEVICES];       /* fdk_gpu_code */
  int32_t code_arch[FDK_MAX_DEVICES];  /* SASS: the cubin's architecture;
                                          JIT: the PTX compiled */
  char message[256];        /* when cuda_usable is 0: why, in words */
  /* Added in 0.6 (a 0.4 caller's smaller struct_size is still accepted). */
  int32_t driver_version;   /* the CUDA version the NVIDIA driver supports,
                               as cuDriverGetVersion: 13000 for 13.0; 0 when
                               no driver could be loaded */
  int32_t driver_required;  /* the oldest such version the carried GPU code
                               loads on (13000: NVIDIA driver 580 or newer) */
} fdk_backend_info;

/* Which backends this library can run here, and for each GPU whether it
   runs the build's machine code or JIT-compiled PTX. Any thread, no handle
   needed; asks the NVIDIA driver (libcuda.so.1 / nvcuda.dll, loaded at run
   time from the system; it initialises each GPU once). No CUDA toolkit is
   needed: the GPU code travels inside the library. Errors
   (fdk_last_create_error): INVALID_ARGUMENT (NULL), STRUCT_SIZE. */
FDK_API fdk_status fdk_get_backend_info(fdk_backend_info* info);

/* ---- host memory ------------------------------------------------------------ */
/* Allocates `bytes` of host memory to read slabs into: page-
   locked when this build has the CUDA backend and a device is usable, so
   that fdk_read_slab copies a slab held on the GPUs straight into it by DMA,
   without the library's bounce buffers and the host copy out of them (the
   bound of reads on several GPUs); any other buffer works the same, only
   slower. Falls back to ordinary memory (64-byte aligned) when page-locked
   memory cannot be had. Page-locked memory is a scarce system resource:
   allocate what the reads need (one slab or a few), not the volume. Any
   thread, no handle needed. Errors (fdk_last_create_error): INVALID_ARGUMENT
   (NULL out, 0 bytes), OUT_OF_MEMORY. On failure *out is NULL. */
FDK_API fdk_status fdk_alloc_host(size_t bytes, void** out);
/* Frees a buffer from fdk_alloc_host; NULL is allowed. A pointer it did not
   hand out (or freed already) gets INVALID_ARGUMENT and is left alone. */
FDK_API fdk_status fdk_free_host(void* p);

/* ---- geometry estimation (added in 0.7) ------------------------------------
   Estimates, from a circular scan's own projections, the two errors a
   nominal geometry most often has: the detector's offset along u (the column
   through the rotation axis, the "centre of rotation") and its tilt in its
   own plane. The corrected geometry of every view is the nominal one with
   projection_offset_x + offset_u_mm and in_plane_angle_deg + tilt_deg
   (fdk_apply_geometry_estimate). Full scans, short scans and offset-detector
   (half-fan) scans, uniform or per-view RTK parameters (not matrices-only
   geometry). How and how well: docs/ACCURACY.md. */

enum {
  FDK_ESTIMATE_OFFSET = 1,         /* offset_u_* is estimated */
  FDK_ESTIMATE_TILT = 2,           /* tilt_deg is estimated */
  FDK_ESTIMATE_LOW_STRUCTURE = 4,  /* the views hold too little structure
                                      that changes with angle to be sure */
  FDK_ESTIMATE_FEW_PAIRS = 8       /* too few views with an opposite view */
};

typedef struct fdk_geometry_estimate {
  uint32_t struct_size;        /* sizeof(fdk_geometry_estimate), set by the
                                  caller (fdk_geometry_estimate_init) */
  double offset_u_mm;          /* add to every view's projection_offset_x */
  double offset_u_pixels;      /* the same in detector columns */
  double tilt_deg;             /* add to every view's in_plane_angle_deg;
                                  0 unless FDK_ESTIMATE_TILT is set (a
                                  tilt is reported only where the scan pins
                                  it to a sigma of 0.025 degrees, twice
                                  that within 0.05) */
  double offset_sigma_pixels;  /* one standard deviation of offset_u_pixels */
  double tilt_sigma_deg;       /* one standard deviation of the tilt fitted,
                                  also when it was too loose to report */
  double confidence;           /* in [0, 1], of what the flags report;
                                  below 0.5 the estimate is not to be
                                  applied without a look */
  int32_t view_pairs;          /* pairs of views compared */
  int32_t views_used;          /* views that took part */
  int32_t rows_used;           /* detector rows kept of each view */
  uint32_t flags;              /* FDK_ESTIMATE_* */
  char basis[256];             /* what it was computed from, in words */
} fdk_geometry_estimate;

/* Sets struct_size and zeroes the rest; returns its argument (NULL-safe). */
FDK_API fdk_geometry_estimate* fdk_geometry_estimate_init(fdk_geometry_estimate* estimate);

/* A reconstruction created with estimate_geometry = 1: the estimate from
   the views pushed so far (any time; also after fdk_finish). fdk_finish
   starts it on a thread of the library's own, so after fdk_finish this
   returns that estimate, ready by the time the slabs are (on one GPU it is
   computed while the GPU backprojects). The volume is
   still the nominal geometry's: to apply the estimate, push the views again
   into a reconstruction whose config went through
   fdk_apply_geometry_estimate (the stored views are filtered with the
   nominal geometry, and refiltering needs the raw ones). Errors:
   INVALID_ARGUMENT (NULL), STRUCT_SIZE, INVALID_STATE (estimate_geometry
   was 0). Thread rules: as fdk_get_progress. */
FDK_API fdk_status fdk_get_geometry_estimate(fdk_context* ctx, fdk_geometry_estimate* estimate);

/* An estimator alone, for a caller that wants the estimate before it
   reconstructs (fdk-convert --estimate-geometry): only the geometry and
   detector of `config` are used. Views pushed in any order, each once (a
   view pushed again replaces the earlier one); calls on one estimator are
   serialised by the caller. Errors of create (fdk_last_create_error):
   INVALID_ARGUMENT (NULL, invalid geometry, matrices-only geometry),
   STRUCT_SIZE (a size fdk_create refuses too), OUT_OF_MEMORY. */
typedef struct fdk_estimator fdk_estimator;
FDK_API fdk_status fdk_estimator_create(const fdk_config* config, fdk_estimator** out);
/* View `index` of the scan: detector.size[1] rows of detector.size[0]
   floats (line integrals), row_pitch_bytes apart (0 = contiguous). Errors:
   INVALID_ARGUMENT (NULL, a pitch shorter than a row, a non-finite pixel),
   OUT_OF_RANGE (index). */
FDK_API fdk_status fdk_estimator_push(fdk_estimator* estimator, int32_t index, const float* pixels,
                                      size_t row_pitch_bytes);
/* The estimate from the views pushed so far. Too few views is not an
   error: confidence 0 and a basis that says why. */
FDK_API fdk_status fdk_estimator_estimate(fdk_estimator* estimator, fdk_geometry_estimate* estimate);
/* The last error on this estimator, "" when none; valid until its next call. */
FDK_API const char* fdk_estimator_last_error(const fdk_estimator* estimator);
/* NULL-safe; destroying twice does nothing. */
FDK_API void fdk_estimator_destroy(fdk_estimator* estimator);

/* `view` corrected by `estimate` (projection_offset_x + offset_u_mm,
   in_plane_angle_deg + tilt_deg) into *out (which may be `view`). Errors:
   INVALID_ARGUMENT (NULL), STRUCT_SIZE. */
FDK_API fdk_status fdk_apply_geometry_estimate(const fdk_geometry_estimate* estimate, const fdk_view* view,
                                               fdk_view* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The live preview (fdk_config.preview), declared apart. */
#include "fdk_preview.h"

#endif /* FDK_FDK_H */
