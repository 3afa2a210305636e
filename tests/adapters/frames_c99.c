/* fdk_frames.h from a C99 translation unit (-std=c99 -pedantic -Werror). */
#include <fdk/fdk_frames.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  fdk_frames_config fc;
  fdk_config rc;
  fdk_frames* h = NULL;
  fdk_frames_stats stats;
  fdk_status s;
  fdk_frames_config_init(&fc);
  fdk_config_init(&rc);
  if (fc.struct_size != sizeof fc || fc.queue_capacity != 8 || fc.bin[0] != 1) {
    fprintf(stderr, "bad defaults\n");
    return 1;
  }
  /* An empty frame size is refused with a message. */
  s = fdk_frames_create(&rc, &fc, &h);
  if (s != FDK_ERROR_INVALID_ARGUMENT || h != NULL || strlen(fdk_frames_last_create_error()) == 0) {
    fprintf(stderr, "create: %s\n", fdk_status_string(s));
    return 1;
  }
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if (fdk_frames_get_stats(NULL, &stats) != FDK_ERROR_INVALID_ARGUMENT) return 1;
  fdk_frames_destroy(NULL);
  printf("fdk_frames.h is C99: ok\n");
  return 0;
}
