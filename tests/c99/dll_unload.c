/*
 * Windows only: fdk.dll loaded at run time (LoadLibrary), used from a thread
 * of the host that outlives it, then unloaded (FreeLibrary) before that
 * thread ends, as a .NET or plugin host may do. The library keeps
 * per-thread objects (the thread's error message, the store's scratch) in
 * fiber-local slots under MinGW-w64 (core/include/fdk/core/per_thread.hpp):
 * unloading must destroy the objects of threads still alive, and the end of
 * such a thread must not call into the unloaded DLL.
 * Prints one line on success; returns 0 or 1.
 */
#include <fdk/fdk.h>

#include <stdio.h>
#include <windows.h>

typedef fdk_config* (*config_init_fn)(fdk_config*);
typedef fdk_status (*create_fn)(const fdk_config*, fdk_context**);
typedef const char* (*create_error_fn)(void);
typedef fdk_status (*push_fn)(fdk_context*, int32_t, const float*, size_t, const fdk_view*);
typedef fdk_status (*finish_fn)(fdk_context*);
typedef fdk_status (*read_fn)(fdk_context*, int32_t, float*, size_t);
typedef void (*destroy_fn)(fdk_context*);

enum { N = 8, VIEWS = 16, COLS = 12, ROWS = 12 };

static struct {
  config_init_fn config_init;
  create_fn create;
  create_error_fn create_error;
  push_fn push;
  finish_fn finish;
  read_fn read;
  destroy_fn destroy;
} api;
static HANDLE g_worked, g_may_end;
static int g_worker_ok = 0; /* written before g_worked is set */

/* GetProcAddress's FARPROC to a typed pointer, through a generic function
   pointer type (a direct cast between function types warns). */
static void (*symbol(HMODULE lib, const char* name))(void) {
  return (void (*)(void))GetProcAddress(lib, name);
}

/* A handle-less failure (per-thread message) and one small reconstruction
   (the store's per-thread scratch), on this host thread. */
static DWORD WINAPI worker(LPVOID unused) {
  static float pixels[ROWS * COLS];
  static float slab[N * N * N];
  fdk_config config;
  fdk_context* ctx = NULL;
  int axis, view, ok = 1;
  (void)unused;

  if (api.create(NULL, &ctx) != FDK_ERROR_INVALID_ARGUMENT || api.create_error()[0] == '\0') ok = 0;
  api.config_init(&config);
  for (axis = 0; axis < 3; ++axis) {
    config.volume.size[axis] = N;
    config.volume.spacing[axis] = 1.0;
    config.volume.origin[axis] = -0.5 * (N - 1);
  }
  config.detector.size[0] = COLS;
  config.detector.size[1] = ROWS;
  config.detector.spacing[0] = config.detector.spacing[1] = 1.0;
  config.detector.origin[0] = -0.5 * (COLS - 1);
  config.detector.origin[1] = -0.5 * (ROWS - 1);
  config.scan.num_views = VIEWS;
  config.scan.uniform.sid = 100.0;
  config.scan.uniform.sdd = 150.0;
  config.backend = FDK_BACKEND_CPU;
  config.slab_thickness = N;
  if (ok && api.create(&config, &ctx) != FDK_OK) ok = 0;
  for (view = 0; ok && view < VIEWS; ++view)
    if (api.push(ctx, view, pixels, COLS * sizeof(float), NULL) != FDK_OK) ok = 0;
  if (ok && api.finish(ctx) != FDK_OK) ok = 0;
  if (ok && api.read(ctx, 0, slab, sizeof slab) != FDK_OK) ok = 0;
  if (ctx) api.destroy(ctx);
  g_worker_ok = ok;
  SetEvent(g_worked);
  WaitForSingleObject(g_may_end, INFINITE); /* ends after fdk.dll is gone */
  return 0;
}

int main(void) {
  HMODULE lib = LoadLibraryA("fdk.dll");
  HANDLE thread;
  if (!lib) {
    fprintf(stderr, "dll unload: fdk.dll not found (error %lu)\n", (unsigned long)GetLastError());
    return 1;
  }
  api.config_init = (config_init_fn)symbol(lib, "fdk_config_init");
  api.create = (create_fn)symbol(lib, "fdk_create");
  api.create_error = (create_error_fn)symbol(lib, "fdk_last_create_error");
  api.push = (push_fn)symbol(lib, "fdk_push_projection");
  api.finish = (finish_fn)symbol(lib, "fdk_finish");
  api.read = (read_fn)symbol(lib, "fdk_read_slab");
  api.destroy = (destroy_fn)symbol(lib, "fdk_destroy");
  if (!api.config_init || !api.create || !api.create_error || !api.push || !api.finish || !api.read ||
      !api.destroy) {
    fprintf(stderr, "dll unload: a function is missing from fdk.dll\n");
    return 1;
  }
  /* The main thread's own per-thread message, alive at the unload too. */
  if (api.create(NULL, NULL) != FDK_ERROR_INVALID_ARGUMENT) return 1;

  g_worked = CreateEventA(NULL, TRUE, FALSE, NULL);
  g_may_end = CreateEventA(NULL, TRUE, FALSE, NULL);
  thread = g_worked && g_may_end ? CreateThread(NULL, 0, worker, NULL, 0, NULL) : NULL;
  if (!thread) return 1;
  if (WaitForSingleObject(g_worked, 60000) != WAIT_OBJECT_0 || !g_worker_ok) {
    fprintf(stderr, "dll unload: the reconstruction on the host thread failed\n");
    return 1;
  }
  if (!FreeLibrary(lib) || GetModuleHandleA("fdk.dll") != NULL) {
    fprintf(stderr, "dll unload: fdk.dll was not unloaded\n");
    return 1;
  }
  SetEvent(g_may_end);
  if (WaitForSingleObject(thread, 10000) != WAIT_OBJECT_0) {
    fprintf(stderr, "dll unload: the host thread did not end\n");
    return 1;
  }
  printf("dll unload: ok\n");
  return 0;
}
