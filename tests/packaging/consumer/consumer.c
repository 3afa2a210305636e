/*
 * A program outside the fdk tree, built against an installed fdk (through
 * find_package(fdk) in CMakeLists.txt, or through pkg-config): reconstructs
 * a uniform sphere in 16^3 voxels on the CPU and checks its density.
 * Prints one line; exit status 0 on success.
 */
#include <fdk/fdk.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 16, VIEWS = 32, COLS = 24, ROWS = 24 };

int main(void) {
  const double sid = 100.0, sdd = 150.0, pixel = 1.5, radius = 5.0, mu = 0.02;
  static float pixels[ROWS * COLS];
  static float volume[N * N * N];
  fdk_config config;
  fdk_context* ctx = NULL;
  fdk_status status;
  int32_t slabs = 0, slab;
  int axis, i, j, view;
  double centre = 0.0;

  if (fdk_version() != FDK_VERSION_NUMBER) {
    fprintf(stderr, "consumer: header %d but library %u\n", FDK_VERSION_NUMBER, fdk_version());
    return 1;
  }

  fdk_config_init(&config);
  for (axis = 0; axis < 3; ++axis) {
    config.volume.size[axis] = N;
    config.volume.spacing[axis] = 1.0;
    config.volume.origin[axis] = -0.5 * (N - 1);
  }
  config.detector.size[0] = COLS;
  config.detector.size[1] = ROWS;
  config.detector.spacing[0] = config.detector.spacing[1] = pixel;
  config.detector.origin[0] = -0.5 * (COLS - 1) * pixel;
  config.detector.origin[1] = -0.5 * (ROWS - 1) * pixel;
  config.scan.num_views = VIEWS;
  config.scan.uniform.sid = sid;
  config.scan.uniform.sdd = sdd;
  config.backend = FDK_BACKEND_CPU;
  config.num_threads = 2;

  status = fdk_create(&config, &ctx);
  if (status != FDK_OK) {
    fprintf(stderr, "consumer: fdk_create: %s\n", fdk_last_create_error());
    return 1;
  }
  /* A sphere at the isocentre looks the same from every angle. */
  for (j = 0; j < ROWS; ++j)
    for (i = 0; i < COLS; ++i) {
      double u = (i - 0.5 * (COLS - 1)) * pixel, v = (j - 0.5 * (ROWS - 1)) * pixel;
      double r2 = u * u + v * v, d2 = sid * sid * r2 / (r2 + sdd * sdd);
      pixels[j * COLS + i] = d2 < radius * radius ? (float)(mu * 2.0 * sqrt(radius * radius - d2)) : 0.0f;
    }
  for (view = 0; view < VIEWS && status == FDK_OK; ++view)
    status = fdk_push_projection(ctx, view, pixels, COLS * sizeof(float), NULL);
  if (status == FDK_OK) status = fdk_finish(ctx);
  if (status == FDK_OK) status = fdk_slab_count(ctx, &slabs);
  for (slab = 0; slab < slabs && status == FDK_OK; ++slab) {
    fdk_slab_info info;
    info.struct_size = sizeof info;
    status = fdk_get_slab_info(ctx, slab, &info);
    if (status == FDK_OK)
      status = fdk_read_slab(ctx, slab, volume + (size_t)info.y_begin * N * N, (size_t)info.byte_size);
  }
  if (status != FDK_OK) {
    fprintf(stderr, "consumer: %s: %s\n", fdk_status_string(status), fdk_last_error(ctx));
    fdk_destroy(ctx);
    return 1;
  }
  fdk_destroy(ctx);

  for (j = N / 2 - 1; j <= N / 2; ++j)        /* y */
    for (axis = N / 2 - 1; axis <= N / 2; ++axis)  /* z */
      for (i = N / 2 - 1; i <= N / 2; ++i)    /* x */
        centre += volume[((size_t)j * N + axis) * N + i] / 8.0;
  if (!(fabs(centre - mu) < 0.1 * mu)) {
    fprintf(stderr, "consumer: centre %g, expected %g\n", centre, mu);
    return 1;
  }
  printf("consumer: fdk %s, 16^3 on the CPU in %d slab(s), centre %.5f (expected %.5f)\n",
         fdk_version_string(), (int)slabs, centre, mu);
  return 0;
}
