// Host memory from fdk_alloc_host to read slabs into (Reconstructor.ReadSlab
// with a HostBuffer): page-locked when a GPU is usable, so that the GPUs copy
// slabs into it by DMA, without the library's bounce buffers; ordinary
// memory otherwise. Page-locked memory is a scarce system resource: size it
// for a slab or a few, not for the volume, and Dispose it when done.
using System;
using System.Runtime.InteropServices;

namespace Fdk
{
    /// <summary>Host memory from fdk_alloc_host (page-locked when a GPU is usable) to read slabs into with <see cref="Reconstructor.ReadSlab(int, HostBuffer, long)"/>; its own SafeHandle frees it once.</summary>
    public sealed class HostBuffer : IDisposable
    {
        private readonly FdkHostBufferHandle _handle;

        /// <summary>Allocates <paramref name="byteLength"/> bytes (fdk_alloc_host).</summary>
        public HostBuffer(long byteLength)
        {
            if (byteLength <= 0) throw new ArgumentOutOfRangeException("byteLength");
            NativeLibraryProbe.EnsureLoaded();
            FdkHostBufferHandle handle;
            int status = NativeMethods.fdk_alloc_host(new UIntPtr((ulong)byteLength), out handle);
            if (status != (int)FdkStatus.Ok)
            {
                if (handle != null) handle.Dispose();
                FdkException.Check(status, null);
            }
            _handle = handle;
            ByteLength = byteLength;
        }

        /// <summary>The size in bytes.</summary>
        public long ByteLength { get; private set; }

        /// <summary>The memory's address; valid until Dispose.</summary>
        public IntPtr Pointer
        {
            get
            {
                if (_handle.IsClosed) throw new ObjectDisposedException("HostBuffer");
                return _handle.DangerousGetHandle();
            }
        }

        /// <summary>
        /// Copies <paramref name="count"/> floats from float
        /// <paramref name="sourceIndex"/> of the buffer into
        /// <paramref name="destination"/> at <paramref name="destinationIndex"/>.
        /// </summary>
        public void CopyTo(long sourceIndex, float[] destination, int destinationIndex, int count)
        {
            if (destination == null) throw new ArgumentNullException("destination");
            if (sourceIndex < 0 || count < 0 || (sourceIndex + count) * sizeof(float) > ByteLength)
                throw new ArgumentOutOfRangeException("sourceIndex");
            if (destinationIndex < 0 || destinationIndex > destination.Length - count)
                throw new ArgumentOutOfRangeException("destinationIndex");
            Use(p => Marshal.Copy(new IntPtr(p.ToInt64() + sourceIndex * sizeof(float)), destination,
                                  destinationIndex, count));
        }

        /// <summary>Runs <paramref name="use"/> with the address, the buffer kept alive meanwhile.</summary>
        internal void Use(Action<IntPtr> use)
        {
            bool added = false;
            try
            {
                _handle.DangerousAddRef(ref added);
                use(_handle.DangerousGetHandle());
            }
            finally
            {
                if (added) _handle.DangerousRelease();
            }
        }

        /// <summary>Frees the memory (fdk_free_host) once no call uses it. Idempotent.</summary>
        public void Dispose() { _handle.Dispose(); }
    }
}
