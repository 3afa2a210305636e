// The one SafeHandle of the binding: an fdk_context*. ReleaseHandle calls
// fdk_destroy exactly once, after every P/Invoke that uses the handle has
// returned (SafeHandle reference counting), from Dispose or, if the owner
// never disposed it, from the finalizer thread.
using System;
using System.Runtime.InteropServices;
using System.Threading;

namespace Fdk
{
    internal sealed class FdkContextHandle : SafeHandle
    {
        private static long s_released;

        public FdkContextHandle() : base(IntPtr.Zero, true) { }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        /// <summary>
        /// The native progress callback registered with this context. The
        /// library holds a raw function pointer to it until fdk_destroy, so
        /// the delegate lives exactly as long as the handle: it is kept here,
        /// and a handle in use by a P/Invoke is itself kept alive by the
        /// marshaller, even when the Reconstructor that owns it is no longer
        /// referenced while a push is running.
        /// </summary>
        internal NativeMethods.ProgressCallback ProgressCallback;

        /// <summary>Contexts destroyed so far in this process (for tests).</summary>
        internal static long ReleasedCount { get { return Interlocked.Read(ref s_released); } }

        protected override bool ReleaseHandle()
        {
            NativeMethods.fdk_destroy(handle);
            handle = IntPtr.Zero;
            Interlocked.Increment(ref s_released);
            // The library no longer calls back once fdk_destroy has returned.
            ProgressCallback = null;
            return true;
        }
    }
}
