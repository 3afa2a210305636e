/*
 * A scanner driver's view of an installed fdk: the frame-callback adapter
 * (fdk::frames through find_package(fdk), or pkg-config fdk-frames) takes
 * raw 16-bit detector frames of a uniform sphere (open beam 60000 counts),
 * corrects and logs them, and the 16^3 volume's centre must hold the
 * sphere's density. Prints one line; exit status 0 on success.
 */
#include <fdk/fdk.h>
#include <fdk/fdk_frames.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 16, VIEWS = 32, COLS = 24, ROWS = 24 };

int main(void) {
  const double sid = 100.0, sdd = 150.0, pixel = 1.5, radius = 5.0, mu = 0.02;
  static uint16_t pixels[ROWS * COLS];
  static float volume[N * N * N];
  fdk_config config;
  fdk_frames_config frames_config;
  fdk_frames* frames = NULL;
  fdk_context* ctx = NULL;
  fdk_status status;
  int32_t slabs = 0, slab;
  int axis, i, j, view;
  double centre = 0.0;

  if (fdk_version() != FDK_VERSION_NUMBER) {
    fprintf(stderr, "frames consumer: header %d but library %u\n", FDK_VERSION_NUMBER, fdk_version());
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

  fdk_frames_config_init(&frames_config);
  frames_config.width = COLS;
  frames_config.height = ROWS;
  frames_config.i0 = 60000.0;
  status = fdk_frames_create(&config, &frames_config, &frames);
  if (status != FDK_OK) {
    fprintf(stderr, "frames consumer: fdk_frames_create: %s\n", fdk_frames_last_create_error());
    return 1;
  }
  ctx = fdk_frames_context(frames);
  /* A sphere at the isocentre looks the same from every angle. */
  for (j = 0; j < ROWS; ++j)
    for (i = 0; i < COLS; ++i) {
      double u = (i - 0.5 * (COLS - 1)) * pixel, v = (j - 0.5 * (ROWS - 1)) * pixel;
      double r2 = u * u + v * v, d2 = sid * sid * r2 / (r2 + sdd * sdd);
      double p = d2 < radius * radius ? mu * 2.0 * sqrt(radius * radius - d2) : 0.0;
      pixels[j * COLS + i] = (uint16_t)(60000.0 * exp(-p) + 0.5);
    }
  for (view = 0; view < VIEWS && status == FDK_OK; ++view)
    status = fdk_frames_push_u16(frames, view, 0.0, 0.0, pixels, COLS * sizeof(uint16_t), -1);
  if (status == FDK_OK) status = fdk_frames_finish(frames);
  if (status == FDK_OK) status = fdk_slab_count(ctx, &slabs);
  for (slab = 0; slab < slabs && status == FDK_OK; ++slab) {
    fdk_slab_info info;
    info.struct_size = sizeof info;
    status = fdk_get_slab_info(ctx, slab, &info);
    if (status == FDK_OK)
      status = fdk_read_slab(ctx, slab, volume + (size_t)info.y_begin * N * N, (size_t)info.byte_size);
  }
  if (status != FDK_OK) {
    fprintf(stderr, "frames consumer: %s: %s / %s\n", fdk_status_string(status), fdk_frames_last_error(frames),
            fdk_last_error(ctx));
    fdk_frames_destroy(frames);
    return 1;
  }
  fdk_frames_destroy(frames);

  for (j = N / 2 - 1; j <= N / 2; ++j)        /* y */
    for (axis = N / 2 - 1; axis <= N / 2; ++axis)  /* z */
      for (i = N / 2 - 1; i <= N / 2; ++i)    /* x */
        centre += volume[((size_t)j * N + axis) * N + i] / 8.0;
  if (!(fabs(centre - mu) < 0.1 * mu)) {
    fprintf(stderr, "frames consumer: centre %g, expected %g\n", centre, mu);
    return 1;
  }
  printf("frames consumer: fdk %s, 16-bit frames, 16^3 on the CPU in %d slab(s), centre %.5f (expected %.5f)\n",
         fdk_version_string(), (int)slabs, centre, mu);
  return 0;
}
