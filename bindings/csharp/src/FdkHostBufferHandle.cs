// The SafeHandle of a buffer from fdk_alloc_host: ReleaseHandle calls
// fdk_free_host exactly once, after every call that uses the buffer has
// returned, from Dispose or, if the owner never disposed it, from the
// finalizer thread.
using System;
using System.Runtime.InteropServices;

namespace Fdk
{
    internal sealed class FdkHostBufferHandle : SafeHandle
    {
        public FdkHostBufferHandle() : base(IntPtr.Zero, true) { }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override bool ReleaseHandle()
        {
            bool freed = NativeMethods.fdk_free_host(handle) == (int)FdkStatus.Ok;
            handle = IntPtr.Zero;
            return freed;
        }
    }
}
