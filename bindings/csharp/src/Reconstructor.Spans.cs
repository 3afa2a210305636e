// Span and Memory overloads of the push and the read: the caller's memory is
// pinned for the native call and used in place (no copy), as the array and
// IntPtr overloads do. Span comes from System.Memory on netstandard2.0.
using System;
using System.Runtime.InteropServices;

namespace Fdk
{
    public sealed partial class Reconstructor
    {
        /// <summary>
        /// Pushes view <paramref name="index"/> from <paramref name="pixels"/>:
        /// its first Rows * Columns floats, row-major line integrals
        /// (-log(I/I0)). Read in place, not copied; the memory can be reused
        /// once the call returns. <paramref name="measuredGeometry"/>, when
        /// given, replaces the configured geometry of this view.
        /// </summary>
        /// <exception cref="ArgumentException"><paramref name="pixels"/> is shorter than a projection.</exception>
        public unsafe void PushProjection(int index, ReadOnlySpan<float> pixels, ViewGeometry measuredGeometry = null)
        {
            long needed = (long)_columns * _rows;
            if (pixels.Length < needed)
                throw new ArgumentException("pixels needs " + needed + " floats, has " + pixels.Length, "pixels");
            fixed (float* p = &MemoryMarshal.GetReference(pixels))
            {
                PushProjection(index, (IntPtr)p, (long)_columns * sizeof(float), measuredGeometry);
            }
        }

        /// <summary>
        /// <see cref="PushProjection(int, ReadOnlySpan{float}, ViewGeometry)"/>
        /// from a <see cref="ReadOnlyMemory{T}"/> (its span, in place).
        /// </summary>
        public void PushProjection(int index, ReadOnlyMemory<float> pixels, ViewGeometry measuredGeometry = null)
        {
            PushProjection(index, pixels.Span, measuredGeometry);
        }

        /// <summary>
        /// Copies slab <paramref name="slab"/> straight into
        /// <paramref name="destination"/>, which needs
        /// GetSlabInfo(slab).FloatCount floats (x fastest, then z, then y).
        /// Blocks as <see cref="ReadSlab(int, float[], int)"/> does; see
        /// <see cref="ReadSlabAsync(int, Memory{float}, System.Threading.CancellationToken)"/>
        /// for the way not to.
        /// </summary>
        public unsafe void ReadSlab(int slab, Span<float> destination)
        {
            fixed (float* p = &MemoryMarshal.GetReference(destination))
            {
                ReadSlab(slab, (IntPtr)p, (long)destination.Length * sizeof(float));
            }
        }
    }
}
