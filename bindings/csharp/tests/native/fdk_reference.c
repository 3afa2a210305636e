/*
 * fdk_reference: the C side of the C# binding's equivalence test. Runs one
 * CPU reconstruction through the C ABI with the geometry given on the command
 * line, reading the projections from a raw file and writing the volume to
 * another, so that the C# test can require identical floats from the same
 * input pushed through the binding.
 *
 *   fdk_reference NX NY NZ SPACING COLS ROWS PIXEL SID SDD VIEWS FIRST ARC
 *                 THREADS SLAB_THICKNESS projections.raw volume.raw
 *
 * Volume and detector are centred (origin -(n-1)/2 * spacing); the scan is
 * uniform; projections.raw holds VIEWS * ROWS * COLS float32 (native byte
 * order), view after view; volume.raw receives NY * NZ * NX float32 in fdk's
 * layout. Exit status 0 on success; errors go to stderr.
 */
#include <fdk/fdk.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what, fdk_status status, const fdk_context* ctx) {
  fprintf(stderr, "fdk_reference: %s: %s: %s\n", what, fdk_status_string(status),
          ctx ? fdk_last_error(ctx) : fdk_last_create_error());
  return 1;
}

int main(int argc, char** argv) {
  fdk_config config;
  fdk_context* ctx = NULL;
  fdk_status status;
  int axis, view, slab, slabs = 0, result = 0;
  int n[3], cols, rows, views, threads, thickness;
  double spacing, pixel;
  size_t projection_floats;
  float* pixels = NULL;
  float* volume = NULL;
  FILE* in = NULL;
  FILE* out = NULL;

  if (argc != 17) {
    fprintf(stderr, "usage: fdk_reference NX NY NZ SPACING COLS ROWS PIXEL SID SDD VIEWS "
                    "FIRST ARC THREADS SLAB_THICKNESS projections.raw volume.raw\n");
    return 2;
  }
  n[0] = atoi(argv[1]);
  n[1] = atoi(argv[2]);
  n[2] = atoi(argv[3]);
  spacing = atof(argv[4]);
  cols = atoi(argv[5]);
  rows = atoi(argv[6]);
  pixel = atof(argv[7]);
  views = atoi(argv[10]);
  threads = atoi(argv[13]);
  thickness = atoi(argv[14]);

  fdk_config_init(&config);
  for (axis = 0; axis < 3; ++axis) {
    config.volume.size[axis] = n[axis];
    config.volume.spacing[axis] = spacing;
    config.volume.origin[axis] = -0.5 * (n[axis] - 1) * spacing;
  }
  config.detector.size[0] = cols;
  config.detector.size[1] = rows;
  config.detector.spacing[0] = config.detector.spacing[1] = pixel;
  config.detector.origin[0] = -0.5 * (cols - 1) * pixel;
  config.detector.origin[1] = -0.5 * (rows - 1) * pixel;
  config.scan.num_views = views;
  config.scan.uniform.sid = atof(argv[8]);
  config.scan.uniform.sdd = atof(argv[9]);
  config.scan.first_angle_deg = atof(argv[11]);
  config.scan.arc_deg = atof(argv[12]);
  config.backend = FDK_BACKEND_CPU;
  config.num_threads = threads;
  config.slab_thickness = thickness;

  status = fdk_create(&config, &ctx);
  if (status != FDK_OK) return fail("fdk_create", status, NULL);

  projection_floats = (size_t)cols * rows;
  pixels = (float*)malloc(projection_floats * sizeof(float));
  volume = (float*)malloc((size_t)n[0] * n[1] * n[2] * sizeof(float));
  in = fopen(argv[15], "rb");
  if (!pixels || !volume || !in) {
    fprintf(stderr, "fdk_reference: cannot allocate or open %s\n", argv[15]);
    result = 1;
    goto done;
  }
  for (view = 0; view < views; ++view) {
    if (fread(pixels, sizeof(float), projection_floats, in) != projection_floats) {
      fprintf(stderr, "fdk_reference: %s is short at view %d\n", argv[15], view);
      result = 1;
      goto done;
    }
    status = fdk_push_projection(ctx, view, pixels, (size_t)cols * sizeof(float), NULL);
    if (status != FDK_OK) {
      result = fail("fdk_push_projection", status, ctx);
      goto done;
    }
  }
  status = fdk_finish(ctx);
  if (status == FDK_OK) status = fdk_slab_count(ctx, &slabs);
  if (status != FDK_OK) {
    result = fail("fdk_finish", status, ctx);
    goto done;
  }
  for (slab = 0; slab < slabs; ++slab) {
    fdk_slab_info info;
    info.struct_size = sizeof info;
    status = fdk_get_slab_info(ctx, slab, &info);
    if (status == FDK_OK)
      status = fdk_read_slab(ctx, slab, volume + (size_t)info.y_begin * n[2] * n[0],
                             (size_t)info.byte_size);
    if (status != FDK_OK) {
      result = fail("fdk_read_slab", status, ctx);
      goto done;
    }
  }
  out = fopen(argv[16], "wb");
  if (!out || fwrite(volume, sizeof(float), (size_t)n[0] * n[1] * n[2], out) !=
                  (size_t)n[0] * n[1] * n[2]) {
    fprintf(stderr, "fdk_reference: cannot write %s\n", argv[16]);
    result = 1;
  }

done:
  if (out && fclose(out) != 0) result = 1;
  if (in) fclose(in);
  free(volume);
  free(pixels);
  fdk_destroy(ctx);
  return result;
}
