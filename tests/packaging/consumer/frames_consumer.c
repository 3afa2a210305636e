/*
 * A scanner driver's view of an installed fdk: the frame-callback adapter
 * (fdk::frames through find_package(fdk), or pkg-config fdk-frames) takes
 * raw 16-bit detector frames of a uniform sphere (sphere_scan.h; open beam
 * 60000 counts), corrects and logs them, and the 16^3 volume's centre must
 * hold the sphere's density. Prints one line; exit status 0 on success.
 */
#include <fdk/fdk.h>
#include <fdk/fdk_frames.h>

#include <math.h>
#include <stdio.h>

#include "sphere_scan.h"

int main(void) {
  static uint16_t pixels[ROWS * COLS];
  fdk_config config;
  fdk_frames_config frames_config;
  fdk_frames* frames = NULL;
  fdk_status status;
  int i, j, view, failed;

  if (check_version("frames consumer")) return 1;
  sphere_config(&config);
  fdk_frames_config_init(&frames_config);
  frames_config.width = COLS;
  frames_config.height = ROWS;
  frames_config.i0 = 60000.0;
  status = fdk_frames_create(&config, &frames_config, &frames);
  if (status != FDK_OK) {
    fprintf(stderr, "frames consumer: fdk_frames_create: %s\n", fdk_frames_last_create_error());
    return 1;
  }
  for (j = 0; j < ROWS; ++j)
    for (i = 0; i < COLS; ++i) pixels[j * COLS + i] = (uint16_t)(60000.0 * exp(-sphere_line_integral(i, j)) + 0.5);
  for (view = 0; view < VIEWS && status == FDK_OK; ++view)
    status = fdk_frames_push_u16(frames, view, 0.0, 0.0, pixels, COLS * sizeof(uint16_t), -1);
  if (status == FDK_OK) status = fdk_frames_finish(frames);
  if (status != FDK_OK) {
    fprintf(stderr, "frames consumer: %s: %s\n", fdk_status_string(status), fdk_frames_last_error(frames));
    fdk_frames_destroy(frames);
    return 1;
  }
  failed = read_and_check(fdk_frames_context(frames), "frames consumer", "16-bit frames");
  fdk_frames_destroy(frames);
  return failed;
}
