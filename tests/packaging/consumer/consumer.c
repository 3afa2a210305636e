/*
 * A program outside the fdk tree, built against an installed fdk (through
 * find_package(fdk) in CMakeLists.txt, or through pkg-config): pushes the
 * line integrals of a uniform sphere (sphere_scan.h) and checks the
 * density of the 16^3 volume. Prints one line; exit status 0 on success.
 */
#include <fdk/fdk.h>

#include <stdio.h>

#include "sphere_scan.h"

int main(void) {
  static float pixels[ROWS * COLS];
  fdk_config config;
  fdk_context* ctx = NULL;
  fdk_status status;
  int i, j, view, failed;

  if (check_version("consumer")) return 1;
  sphere_config(&config);
  status = fdk_create(&config, &ctx);
  if (status != FDK_OK) {
    fprintf(stderr, "consumer: fdk_create: %s\n", fdk_last_create_error());
    return 1;
  }
  for (j = 0; j < ROWS; ++j)
    for (i = 0; i < COLS; ++i) pixels[j * COLS + i] = (float)sphere_line_integral(i, j);
  for (view = 0; view < VIEWS && status == FDK_OK; ++view)
    status = fdk_push_projection(ctx, view, pixels, COLS * sizeof(float), NULL);
  if (status == FDK_OK) status = fdk_finish(ctx);
  if (status != FDK_OK) {
    fprintf(stderr, "consumer: %s: %s\n", fdk_status_string(status), fdk_last_error(ctx));
    fdk_destroy(ctx);
    return 1;
  }
  failed = read_and_check(ctx, "consumer", "line integrals");
  fdk_destroy(ctx);
  return failed;
}
