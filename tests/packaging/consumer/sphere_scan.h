/*
 * The scan both consumers reconstruct: a uniform sphere (radius 5 mm,
 * attenuation 0.02 / mm) at the isocentre of a 32-view circular scan, 16^3
 * voxels of 1 mm, on the CPU. C99, header only, so a consumer stays one
 * compiler call.
 */
#ifndef FDK_CONSUMER_SPHERE_SCAN_H
#define FDK_CONSUMER_SPHERE_SCAN_H
#include <fdk/fdk.h>

#include <math.h>
#include <stdio.h>

enum { N = 16, VIEWS = 32, COLS = 24, ROWS = 24 };
static const double kSid = 100.0, kSdd = 150.0, kPixel = 1.5, kRadius = 5.0, kMu = 0.02;

/* 0 when the header and the loaded library agree. */
static int check_version(const char* who) {
  if (fdk_version() == FDK_VERSION_NUMBER) return 0;
  fprintf(stderr, "%s: header %d but library %u\n", who, FDK_VERSION_NUMBER, fdk_version());
  return 1;
}

static void sphere_config(fdk_config* config) {
  int axis;
  fdk_config_init(config);
  for (axis = 0; axis < 3; ++axis) {
    config->volume.size[axis] = N;
    config->volume.spacing[axis] = 1.0;
    config->volume.origin[axis] = -0.5 * (N - 1);
  }
  config->detector.size[0] = COLS;
  config->detector.size[1] = ROWS;
  config->detector.spacing[0] = config->detector.spacing[1] = kPixel;
  config->detector.origin[0] = -0.5 * (COLS - 1) * kPixel;
  config->detector.origin[1] = -0.5 * (ROWS - 1) * kPixel;
  config->scan.num_views = VIEWS;
  config->scan.uniform.sid = kSid;
  config->scan.uniform.sdd = kSdd;
  config->backend = FDK_BACKEND_CPU;
  config->num_threads = 2;
}

/* The line integral at pixel (i, j): a sphere at the isocentre looks the
   same from every angle. */
static double sphere_line_integral(int i, int j) {
  const double u = (i - 0.5 * (COLS - 1)) * kPixel, v = (j - 0.5 * (ROWS - 1)) * kPixel;
  const double r2 = u * u + v * v, d2 = kSid * kSid * r2 / (r2 + kSdd * kSdd);
  return d2 < kRadius * kRadius ? kMu * 2.0 * sqrt(kRadius * kRadius - d2) : 0.0;
}

/* Reads every slab of a finished reconstruction and checks the density at
   the centre; prints one line. 0 on success. */
static int read_and_check(fdk_context* ctx, const char* who, const char* what) {
  static float volume[N * N * N];
  int32_t slabs = 0, slab;
  int i, j, k;
  double centre = 0.0;
  fdk_status status = fdk_slab_count(ctx, &slabs);
  for (slab = 0; slab < slabs && status == FDK_OK; ++slab) {
    fdk_slab_info info;
    info.struct_size = sizeof info;
    status = fdk_get_slab_info(ctx, slab, &info);
    if (status == FDK_OK)
      status = fdk_read_slab(ctx, slab, volume + (size_t)info.y_begin * N * N, (size_t)info.byte_size);
  }
  if (status != FDK_OK) {
    fprintf(stderr, "%s: %s: %s\n", who, fdk_status_string(status), fdk_last_error(ctx));
    return 1;
  }
  for (j = N / 2 - 1; j <= N / 2; ++j)        /* y */
    for (k = N / 2 - 1; k <= N / 2; ++k)      /* z */
      for (i = N / 2 - 1; i <= N / 2; ++i)    /* x */
        centre += volume[((size_t)j * N + k) * N + i] / 8.0;
  if (!(fabs(centre - kMu) < 0.1 * kMu)) {
    fprintf(stderr, "%s: centre %g, expected %g\n", who, centre, kMu);
    return 1;
  }
  printf("%s: fdk %s, %s, 16^3 on the CPU in %d slab(s), centre %.5f (expected %.5f)\n", who,
         fdk_version_string(), what, (int)slabs, centre, kMu);
  return 0;
}

#endif
