// The SafeHandle of an fdk_estimator*: ReleaseHandle calls
// fdk_estimator_destroy exactly once, after every P/Invoke that uses the
// handle has returned (SafeHandle reference counting), from Dispose or, if
// the owner never disposed it, from the finalizer thread.
using System;
using System.Runtime.InteropServices;

namespace Fdk
{
    internal sealed class FdkEstimatorHandle : SafeHandle
    {
        public FdkEstimatorHandle() : base(IntPtr.Zero, true) { }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override bool ReleaseHandle()
        {
            NativeMethods.fdk_estimator_destroy(handle);
            handle = IntPtr.Zero;
            return true;
        }
    }
}
