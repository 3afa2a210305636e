/*
 * The C ABI from plain C99: compiled with -std=c99 -pedantic -Werror against
 * fdk/fdk.h only, linked against libfdk. Reconstructs a tiny uniform sphere
 * on the CPU backend and checks the misuse codes the header promises.
 * Prints one line on success; failed checks go to stderr. Returns 0 or 1.
 */
#include <fdk/fdk.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,    \
              #cond);                                                      \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

#define CHECK_STATUS(call, expected)                                       \
  do {                                                                     \
    fdk_status got_ = (call);                                              \
    if (got_ != (expected)) {                                              \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__,    \
              __LINE__, #call, fdk_status_string(got_),                    \
              fdk_status_string(expected));                                \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

enum { N = 16, VIEWS = 8, COLS = 16, ROWS = 16 };

static const double kSid = 100.0;
static const double kSdd = 150.0;
static const double kPixel = 1.5;  /* 16 px * 1.5 mm / 1.5 magnification = 16 mm */
static const double kRadius = 5.0; /* mm, a uniform sphere at the isocentre */
static const double kMu = 0.02;    /* its attenuation, mm^-1 */

static void check_versions(void) {
  const char* text = fdk_version_string();
  char expected[32];
  CHECK(fdk_version() == FDK_VERSION_NUMBER);
  CHECK(text != NULL);
  sprintf(expected, "%d.%d.%d", FDK_VERSION_MAJOR, FDK_VERSION_MINOR,
          FDK_VERSION_PATCH);
  CHECK(text != NULL && strcmp(text, expected) == 0);
}

static void check_status_strings(void) {
  int code;
  for (code = FDK_OK; code <= FDK_ERROR_INTERNAL; ++code) {
    const char* name = fdk_status_string((fdk_status)code);
    CHECK(name != NULL);
    CHECK(name != NULL && strncmp(name, "FDK_", 4) == 0);
  }
  CHECK(strncmp(fdk_status_string(FDK_OK), "FDK_OK", 6) == 0);
  CHECK(strncmp(fdk_status_string(FDK_ERROR_BUDGET), "FDK_ERROR_BUDGET", 16) == 0);
  /* Never NULL, even for a code this header does not know. */
  CHECK(fdk_status_string((fdk_status)999) != NULL);
  CHECK(fdk_status_string((fdk_status)-1) != NULL);
}

static void check_defaults(void) {
  fdk_config config;
  fdk_scan scan;
  memset(&config, 0x5a, sizeof config);
  CHECK(fdk_config_init(NULL) == NULL);
  CHECK(fdk_scan_init(NULL) == NULL);
  CHECK(fdk_config_init(&config) == &config);
  CHECK(config.struct_size == sizeof(fdk_config));
  CHECK(config.scan.struct_size == sizeof(fdk_scan));
  CHECK(config.window == FDK_WINDOW_RAM_LAK);
  CHECK(config.cutoff == 1.0);
  CHECK(config.short_scan == FDK_AUTO);
  CHECK(config.offset_detector == FDK_AUTO);
  CHECK(config.backend == FDK_BACKEND_AUTO);
  CHECK(config.precision == FDK_PRECISION_FLOAT32);
  CHECK(config.scan.kind == FDK_SCAN_UNIFORM);
  CHECK(config.scan.arc_deg == 360.0);
  CHECK(config.host_memory_budget == 0 && config.gpu_memory_budget == 0);
  CHECK(config.num_threads == 0 && config.slab_thickness == 0);
  CHECK(config.volume.size[0] == 0 && config.scan.views == NULL);
  CHECK(fdk_scan_init(&scan) == &scan);
  CHECK(scan.struct_size == sizeof(fdk_scan) && scan.kind == FDK_SCAN_UNIFORM);
  CHECK(scan.arc_deg == 360.0);
}

static void make_config(fdk_config* config) {
  int axis;
  fdk_config_init(config);
  for (axis = 0; axis < 3; ++axis) {
    config->volume.size[axis] = N;
    config->volume.spacing[axis] = 1.0;
    config->volume.origin[axis] = -0.5 * (N - 1);
  }
  config->detector.size[0] = COLS;
  config->detector.size[1] = ROWS;
  config->detector.spacing[0] = kPixel;
  config->detector.spacing[1] = kPixel;
  config->detector.origin[0] = -0.5 * (COLS - 1) * kPixel;
  config->detector.origin[1] = -0.5 * (ROWS - 1) * kPixel;
  config->scan.num_views = VIEWS;
  config->scan.arc_deg = 360.0;
  config->scan.uniform.sid = kSid;
  config->scan.uniform.sdd = kSdd;
  config->backend = FDK_BACKEND_CPU;
  config->num_threads = 1;
}

/* Line integrals of the sphere: the ray from the source to detector point
   (u, v) passes the isocentre at SID * r / sqrt(r^2 + SDD^2), r = |(u, v)|;
   the same for every view, so the 8 views are one image. Row-padded by 8
   floats to exercise row_pitch_bytes. */
enum { PITCH = COLS + 8 };
static void make_projection(float* pixels) {
  int i, j;
  for (j = 0; j < ROWS; ++j) {
    for (i = 0; i < PITCH; ++i) {
      double u = (i - 0.5 * (COLS - 1)) * kPixel;
      double v = (j - 0.5 * (ROWS - 1)) * kPixel;
      double r2 = u * u + v * v;
      double d2 = kSid * kSid * r2 / (r2 + kSdd * kSdd);
      double chord = d2 < kRadius * kRadius ? 2.0 * sqrt(kRadius * kRadius - d2) : 0.0;
      pixels[j * PITCH + i] = i < COLS ? (float)(kMu * chord) : -1.0f;
    }
  }
}

static void check_misuse_before_create(void) {
  fdk_config config;
  fdk_context* ctx = (fdk_context*)&config; /* must come back NULL */

  fdk_destroy(NULL); /* NULL-safe */
  CHECK(fdk_last_error(NULL) != NULL && fdk_last_error(NULL)[0] == '\0');

  CHECK_STATUS(fdk_create(NULL, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  CHECK(ctx == NULL);
  CHECK(fdk_last_create_error() != NULL && fdk_last_create_error()[0] != '\0');

  make_config(&config);
  CHECK_STATUS(fdk_create(&config, NULL), FDK_ERROR_INVALID_ARGUMENT);

  make_config(&config);
  config.struct_size = 0;
  ctx = (fdk_context*)&config;
  CHECK_STATUS(fdk_create(&config, &ctx), FDK_ERROR_STRUCT_SIZE);
  CHECK(ctx == NULL);

  make_config(&config);
  config.volume.size[1] = 0;
  CHECK_STATUS(fdk_create(&config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  CHECK(ctx == NULL);

  make_config(&config);
  config.scan.uniform.sid = 0.0;
  CHECK_STATUS(fdk_create(&config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  CHECK(ctx == NULL);

  make_config(&config);
  config.cutoff = 2.0;
  CHECK_STATUS(fdk_create(&config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  CHECK(ctx == NULL);

  /* Queries on a NULL handle fail cleanly. */
  {
    int32_t count = -1;
    CHECK(fdk_slab_count(NULL, &count) == FDK_ERROR_INVALID_ARGUMENT);
    CHECK(fdk_finish(NULL) == FDK_ERROR_INVALID_ARGUMENT);
  }
}

static void reconstruct(void) {
  fdk_config config;
  fdk_context* ctx = NULL;
  fdk_status status;
  static float pixels[ROWS * PITCH];
  const size_t pitch_bytes = PITCH * sizeof(float);
  int32_t count = 0, slab, view, expected_begin = 0;
  fdk_slab_info info;
  fdk_plan_info plan;
  fdk_store_info store;
  fdk_progress progress;
  float* volume;
  size_t voxels = (size_t)N * N * N, k, bad = 0;

  make_config(&config);
  make_projection(pixels);
  status = fdk_create(&config, &ctx);
  if (status != FDK_OK) {
    fprintf(stderr, "fdk_create: %s: %s\n", fdk_status_string(status),
            fdk_last_create_error());
    ++g_failures;
    return;
  }
  CHECK(ctx != NULL);
  CHECK(fdk_last_error(ctx) != NULL);

  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  CHECK_STATUS(fdk_get_plan_info(ctx, &plan), FDK_OK);
  CHECK(plan.backend == FDK_BACKEND_CPU);
  CHECK(plan.num_slabs >= 1 && plan.slab_thickness >= 1);

  CHECK_STATUS(fdk_slab_count(ctx, &count), FDK_OK);
  CHECK(count == plan.num_slabs);
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(fdk_get_slab_info(ctx, count, &info), FDK_ERROR_OUT_OF_RANGE);

  /* Reading before fdk_finish is a state error; so is finishing with no view. */
  volume = (float*)malloc(voxels * sizeof(float));
  if (!volume) {
    fprintf(stderr, "out of memory\n");
    ++g_failures;
    fdk_destroy(ctx);
    return;
  }
  CHECK_STATUS(fdk_read_slab(ctx, 0, volume, voxels * sizeof(float)),
               FDK_ERROR_INVALID_STATE);
  CHECK(fdk_last_error(ctx)[0] != '\0');

  /* Bad pushes store nothing and leave the handle usable. */
  CHECK_STATUS(fdk_push_projection(ctx, VIEWS, pixels, pitch_bytes, NULL),
               FDK_ERROR_OUT_OF_RANGE);
  CHECK_STATUS(fdk_push_projection(ctx, -1, pixels, pitch_bytes, NULL),
               FDK_ERROR_OUT_OF_RANGE);
  CHECK_STATUS(fdk_push_projection(ctx, 0, NULL, pitch_bytes, NULL),
               FDK_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(fdk_push_projection(ctx, 0, pixels, COLS * sizeof(float) - 4, NULL),
               FDK_ERROR_INVALID_ARGUMENT);
  {
    float saved = pixels[3 * PITCH + 5];
    pixels[3 * PITCH + 5] = (float)NAN;
    CHECK_STATUS(fdk_push_projection(ctx, 0, pixels, pitch_bytes, NULL),
                 FDK_ERROR_INVALID_ARGUMENT);
    pixels[3 * PITCH + 5] = saved;
  }

  for (view = 0; view < VIEWS; ++view) {
    CHECK_STATUS(fdk_push_projection(ctx, view, pixels, pitch_bytes, NULL), FDK_OK);
  }
  CHECK_STATUS(fdk_push_projection(ctx, 0, pixels, pitch_bytes, NULL), FDK_ERROR_DUPLICATE);

  memset(&progress, 0, sizeof progress);
  progress.struct_size = sizeof progress;
  CHECK_STATUS(fdk_get_progress(ctx, &progress), FDK_OK);
  CHECK(progress.views_pushed == VIEWS && progress.views_total == VIEWS);

  /* Pushed views are stored in the background; finish waits for them. */
  CHECK_STATUS(fdk_finish(ctx), FDK_OK);
  memset(&store, 0, sizeof store);
  store.struct_size = sizeof store;
  CHECK_STATUS(fdk_get_store_info(ctx, &store), FDK_OK);
  CHECK(store.views_stored == VIEWS);
  CHECK(store.raw_bytes == (uint64_t)VIEWS * ROWS * COLS * sizeof(float));
  CHECK(store.stored_bytes > 0);
  CHECK(store.rel_error_bound == 0.0 && store.abs_error_bound_factor == 0.0);
  CHECK_STATUS(fdk_finish(ctx), FDK_ERROR_INVALID_STATE);
  CHECK_STATUS(fdk_push_projection(ctx, 0, pixels, pitch_bytes, NULL),
               FDK_ERROR_INVALID_STATE);

  /* Every slab, in order, into its place in the whole volume. */
  for (k = 0; k < voxels; ++k) volume[k] = (float)NAN;
  for (slab = 0; slab < count; ++slab) {
    size_t offset;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(fdk_get_slab_info(ctx, slab, &info), FDK_OK);
    CHECK(info.y_begin == expected_begin && info.y_end > info.y_begin);
    CHECK(info.byte_size == (uint64_t)(info.y_end - info.y_begin) * N * N * sizeof(float));
    if (info.y_begin != expected_begin || info.y_end > N || info.y_end <= info.y_begin) break;
    expected_begin = info.y_end;
    offset = (size_t)info.y_begin * N * N;
    if (info.byte_size > 4) {
      CHECK(fdk_read_slab(ctx, slab, volume + offset, (size_t)info.byte_size - 4) != FDK_OK);
    }
    CHECK_STATUS(fdk_read_slab(ctx, slab, volume + offset, (size_t)info.byte_size), FDK_OK);
  }
  CHECK(expected_begin == N);
  CHECK_STATUS(fdk_read_slab(ctx, count, volume, voxels * sizeof(float)),
               FDK_ERROR_OUT_OF_RANGE);

  for (k = 0; k < voxels; ++k) {
    if (!(volume[k] == volume[k]) || volume[k] > 1e30f || volume[k] < -1e30f) ++bad;
  }
  CHECK(bad == 0);

  /* The sphere: voxel (x, y, z) at ((y * N) + z) * N + x. The 2x2x2 voxels
     around the centre lie inside it; four voxels of the central plane 6.5 mm
     from the axis (inside the field of view) lie outside it. */
  if (bad == 0) {
    double centre = 0.0, outside = 0.0;
    int x, y, z;
    const int c = N / 2, e = 1, f = N - 2;
    for (y = c - 1; y <= c; ++y)
      for (z = c - 1; z <= c; ++z)
        for (x = c - 1; x <= c; ++x) centre += volume[((size_t)y * N + z) * N + x];
    centre /= 8.0;
    outside = 0.25 * (volume[((size_t)c * N + c) * N + e] + volume[((size_t)c * N + c) * N + f] +
                      volume[((size_t)c * N + e) * N + c] + volume[((size_t)c * N + f) * N + c]);
    if (!(centre > 0.8 * kMu && centre < 1.2 * kMu) || !(fabs(outside) < 0.25 * kMu)) {
      fprintf(stderr, "sphere: centre %g and outside %g, expected %g and 0\n", centre,
              outside, kMu);
      ++g_failures;
    }
  }

  memset(&progress, 0, sizeof progress);
  progress.struct_size = sizeof progress;
  CHECK_STATUS(fdk_get_progress(ctx, &progress), FDK_OK);
  CHECK(progress.phase == FDK_PHASE_DONE);
  CHECK(progress.slabs_done == count && progress.slabs_total == count);

  free(volume);
  fdk_destroy(ctx);
}

int main(void) {
  check_versions();
  check_status_strings();
  check_defaults();
  check_misuse_before_create();
  reconstruct();
  if (g_failures != 0) {
    fprintf(stderr, "c99 api test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("c99 api test: ok (fdk %s)\n", fdk_version_string());
  return 0;
}
