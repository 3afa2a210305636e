// The C ABI of fdk.h, declared one to one (same names, same parameter order).
// Only Reconstructor and FdkContextHandle call these; nothing here is public.
//
// Rules followed by every declaration:
//   - CallingConvention.Cdecl, the convention of fdk.h on every platform;
//   - handles are FdkContextHandle (a SafeHandle), so a call in flight keeps
//     the native context alive and Dispose waits for it;
//   - const char* results are IntPtr: the strings belong to the library and
//     must not be freed by the marshaller (a `string` return would free them);
//   - size_t is UIntPtr, pointers to caller buffers are IntPtr / pointers, and
//     every struct is blittable, so nothing is copied behind our back.
using System;
using System.Runtime.InteropServices;

namespace Fdk
{
    internal static unsafe class NativeMethods
    {
        /// <summary>
        /// The library name given to DllImport: libfdk.so on Linux (found by
        /// the loader, next to the assembly or on LD_LIBRARY_PATH, or through
        /// the NuGet runtimes/ folder on .NET), fdk.dll on Windows.
        /// </summary>
        internal const string Library = "fdk";

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void ProgressCallback(IntPtr userData, FdkProgressNative* progress);

        // ---- version ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern uint fdk_version();

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_version_string();

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_status_string(int status);

        // ---- configuration ----
        // Not used by Reconstructor (it fills struct_size itself, see
        // Reconstructor.BuildConfig). fdk_config_init writes the 0.5/0.6
        // layout (what programs built against those headers call);
        // fdk_config_init_sized (0.7) writes exactly struct_size bytes of a
        // layout the library knows. Used by the tests.
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_config_init(IntPtr config);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_config_init_sized(IntPtr config, UIntPtr structSize);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_scan_init(IntPtr scan);

        // ---- lifetime ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_create(FdkConfigNative* config, out FdkContextHandle context);

        // Takes the raw pointer: only FdkContextHandle.ReleaseHandle calls it.
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void fdk_destroy(IntPtr context);

        // ---- errors ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_last_error(FdkContextHandle context);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_last_create_error();

        // ---- acquisition ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_push_projection(FdkContextHandle context, int index,
                                                       IntPtr pixels, UIntPtr rowPitchBytes,
                                                       FdkViewNative* view);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_finish(FdkContextHandle context);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_view_state(FdkContextHandle context, int index,
                                                      out int state, out int failure);

        // ---- the volume ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_slab_count(FdkContextHandle context, out int count);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_slab_info(FdkContextHandle context, int slab,
                                                     FdkSlabInfoNative* info);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_read_slab(FdkContextHandle context, int slab,
                                                 IntPtr buffer, UIntPtr bufferBytes);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_slab_ready(FdkContextHandle context, int slab, out int ready);

        // ---- progress and cancellation ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_set_progress_callback(FdkContextHandle context,
                                                             ProgressCallback callback,
                                                             IntPtr userData);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_progress(FdkContextHandle context,
                                                    FdkProgressNative* progress);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_cancel(FdkContextHandle context);

        // ---- introspection ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_store_info(FdkContextHandle context,
                                                      FdkStoreInfoNative* info);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_plan_info(FdkContextHandle context,
                                                     FdkPlanInfoNative* info);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_timings(FdkContextHandle context,
                                                   FdkTimingsNative* timings);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_device_stats(FdkContextHandle context,
                                                        FdkDeviceStatsNative* stats);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_backend_info(FdkBackendInfoNative* info);

        // ---- host memory ----
        // The handle is filled by the marshaller itself, so no failure between
        // the call and the SafeHandle's creation can leak the buffer.
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_alloc_host(UIntPtr bytes, out FdkHostBufferHandle buffer);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_free_host(IntPtr buffer);

        // ---- geometry estimation (0.7) ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern FdkGeometryEstimateNative* fdk_geometry_estimate_init(FdkGeometryEstimateNative* estimate);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_geometry_estimate(FdkContextHandle context,
                                                             FdkGeometryEstimateNative* estimate);

        // The handle is filled by the marshaller itself, as for fdk_create.
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_estimator_create(FdkConfigNative* config, out FdkEstimatorHandle estimator);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_estimator_push(FdkEstimatorHandle estimator, int index,
                                                      IntPtr pixels, UIntPtr rowPitchBytes);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_estimator_estimate(FdkEstimatorHandle estimator,
                                                          FdkGeometryEstimateNative* estimate);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr fdk_estimator_last_error(FdkEstimatorHandle estimator);

        // Takes the raw pointer: only FdkEstimatorHandle.ReleaseHandle calls it.
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void fdk_estimator_destroy(IntPtr estimator);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_apply_geometry_estimate(FdkGeometryEstimateNative* estimate,
                                                               FdkViewNative* view, FdkViewNative* output);

        // ---- the live preview (0.8) ----
        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern FdkPreviewInfoNative* fdk_preview_info_init(FdkPreviewInfoNative* info);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_get_preview_info(FdkContextHandle context, FdkPreviewInfoNative* info);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_read_preview(FdkContextHandle context, float* buffer, UIntPtr bufferBytes,
                                                    FdkPreviewInfoNative* info);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int fdk_read_preview_slices(FdkContextHandle context, FdkPreviewSlicesNative* slices,
                                                           FdkPreviewInfoNative* info);

        /// <summary>A NUL-terminated UTF-8 string owned by the library, copied.</summary>
        internal static string CopyString(IntPtr text)
        {
            if (text == IntPtr.Zero) return string.Empty;
            byte* p = (byte*)text;
            int length = 0;
            while (p[length] != 0) ++length;
            return length == 0 ? string.Empty
                               : System.Text.Encoding.UTF8.GetString(p, length);
        }
    }
}
