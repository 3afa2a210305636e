// The live preview (fdk.h 0.8): its state (fdk_preview_info), three
// orthogonal slices of one moment of it (fdk_preview_slices), and the data of
// Reconstructor.PreviewUpdated.
using System;

namespace Fdk
{
    /// <summary>FDK_PREVIEW_*: the state of the preview (<see cref="PreviewInfo.Flags"/>).</summary>
    [Flags]
    public enum PreviewFlags
    {
        /// <summary>Views still to come (or missing), or pushed with measured angles: an approximation.</summary>
        None = 0,
        /// <summary>Every view of the finished scan is in, with its final weight: the preview equals a
        /// reconstruction of its grid from the same projections.</summary>
        Complete = 1,
        /// <summary>A view could not be added (the GPU holding the preview failed): reads throw the
        /// reason; the reconstruction itself goes on.</summary>
        Failed = 2,
    }

    /// <summary>
    /// The preview's grid and state at one moment (fdk_preview_info).
    /// Immutable.
    /// </summary>
    public sealed class PreviewInfo
    {
        private readonly FdkPreviewInfoNative _native;

        internal unsafe PreviewInfo(FdkPreviewInfoNative native)
        {
            _native = native;
            SizeX = native.volume.size[0];
            SizeY = native.volume.size[1];
            SizeZ = native.volume.size[2];
        }

        /// <summary>The preview's grid (a new copy on each call). Its voxels are laid out as a
        /// slab's: x fastest, then z, then y.</summary>
        public Volume Volume { get { return Volume.FromNative(_native.volume); } }
        /// <summary>Voxels along x.</summary>
        public int SizeX { get; private set; }
        /// <summary>Voxels along y (the rotation axis).</summary>
        public int SizeY { get; private set; }
        /// <summary>Voxels along z.</summary>
        public int SizeZ { get; private set; }
        /// <summary>Floats in the whole preview volume (SizeX * SizeY * SizeZ).</summary>
        public long VoxelCount { get { return (long)SizeX * SizeY * SizeZ; } }
        /// <summary>Views added to it so far.</summary>
        public int Views { get { return _native.views; } }
        /// <summary>Views the scan announced.</summary>
        public int ViewsAnnounced { get { return _native.views_announced; } }
        /// <summary>
        /// The added views' share of the scan's angular weight, in [0, 1]: the
        /// partial sum was divided by it, so that grey values compare with the
        /// finished volume's from about a quarter of the scan on (0: no view
        /// yet, every value 0).
        /// </summary>
        public double Coverage { get { return _native.coverage; } }
        /// <summary>FDK_PREVIEW_*.</summary>
        public PreviewFlags Flags { get { return (PreviewFlags)_native.flags; } }
        /// <summary><see cref="PreviewFlags.Complete"/> is set.</summary>
        public bool IsComplete { get { return (Flags & PreviewFlags.Complete) != 0; } }
        /// <summary><see cref="PreviewFlags.Failed"/> is set.</summary>
        public bool HasFailed { get { return (Flags & PreviewFlags.Failed) != 0; } }
        /// <summary>True when it is accumulated on a GPU, false on the CPU.</summary>
        public bool OnGpu { get { return _native.on_gpu != 0; } }
        /// <summary>Bytes it holds (on that GPU, or in host memory, counted in the host budget).</summary>
        public long MemoryBytes { get { return (long)_native.memory_bytes; } }

        /// <summary>"grid XxYxZ, views n/N, coverage c, flags".</summary>
        public override string ToString()
        {
            return string.Format(System.Globalization.CultureInfo.InvariantCulture,
                "preview {0}x{1}x{2}: views {3}/{4}, coverage {5:0.000}, {6} ({7})",
                SizeX, SizeY, SizeZ, Views, ViewsAnnounced, Coverage, Flags, OnGpu ? "GPU" : "CPU");
        }
    }

    /// <summary>
    /// One plane of the preview: <see cref="Height"/> rows of
    /// <see cref="Width"/> floats in <see cref="Pixels"/>, row after row.
    /// </summary>
    public sealed class PreviewSlice
    {
        internal PreviewSlice(float[] pixels, int width, int height)
        {
            Pixels = pixels;
            Width = width;
            Height = height;
        }

        /// <summary>The values, <see cref="Width"/> * <see cref="Height"/> floats, row after row
        /// (the array belongs to the caller: nothing else writes it).</summary>
        public float[] Pixels { get; private set; }
        /// <summary>Floats in a row (the fast axis).</summary>
        public int Width { get; private set; }
        /// <summary>Rows (the slow axis).</summary>
        public int Height { get; private set; }

        /// <summary>The value at <paramref name="column"/> (fast axis) of <paramref name="row"/>.</summary>
        public float this[int column, int row]
        {
            get
            {
                if ((uint)column >= (uint)Width) throw new ArgumentOutOfRangeException("column");
                if ((uint)row >= (uint)Height) throw new ArgumentOutOfRangeException("row");
                return Pixels[(long)row * Width + column];
            }
        }
    }

    /// <summary>
    /// Three orthogonal slices of one moment of the preview
    /// (fdk_read_preview_slices), crossing at voxel (<see cref="X"/>,
    /// <see cref="Y"/>, <see cref="Z"/>), with the preview's state at that
    /// moment. Immutable but for the slices' arrays, which are the caller's.
    /// </summary>
    public sealed class PreviewSlices
    {
        internal PreviewSlices(int x, int y, int z, PreviewSlice xSlice, PreviewSlice ySlice, PreviewSlice zSlice,
                               PreviewInfo info)
        {
            X = x;
            Y = y;
            Z = z;
            XSlice = xSlice;
            YSlice = ySlice;
            ZSlice = zSlice;
            Info = info;
        }

        /// <summary>The x index of the crossing point (the plane of <see cref="XSlice"/>).</summary>
        public int X { get; private set; }
        /// <summary>The y index of the crossing point (the plane of <see cref="YSlice"/>).</summary>
        public int Y { get; private set; }
        /// <summary>The z index of the crossing point (the plane of <see cref="ZSlice"/>).</summary>
        public int Z { get; private set; }
        /// <summary>The plane x = <see cref="X"/>: z along a row (Width = SizeZ), one row per y
        /// (Height = SizeY).</summary>
        public PreviewSlice XSlice { get; private set; }
        /// <summary>The plane y = <see cref="Y"/>, an axial slice (y is the rotation axis): x along a row
        /// (Width = SizeX), one row per z (Height = SizeZ).</summary>
        public PreviewSlice YSlice { get; private set; }
        /// <summary>The plane z = <see cref="Z"/>: x along a row (Width = SizeX), one row per y
        /// (Height = SizeY).</summary>
        public PreviewSlice ZSlice { get; private set; }
        /// <summary>The preview's grid and state at the moment the slices were taken.</summary>
        public PreviewInfo Info { get; private set; }
    }

    /// <summary>The data of <see cref="Reconstructor.PreviewUpdated"/>.</summary>
    public sealed class PreviewEventArgs : EventArgs
    {
        /// <summary>Event data carrying <paramref name="slices"/> or, when reading them failed,
        /// <paramref name="error"/>; <paramref name="isFinal"/> for the raise after Finish.</summary>
        public PreviewEventArgs(PreviewSlices slices, bool isFinal, Exception error)
        {
            Slices = slices;
            IsFinal = isFinal;
            Error = error;
        }

        /// <summary>The slices through the middle of the preview, with its state
        /// (null when <see cref="Error"/> is set).</summary>
        public PreviewSlices Slices { get; private set; }
        /// <summary>The preview's state when the slices were taken (null when <see cref="Error"/> is set).</summary>
        public PreviewInfo Info { get { return Slices == null ? null : Slices.Info; } }
        /// <summary>True for the last raise, the one after <see cref="Reconstructor.Finish()"/> returned.</summary>
        public bool IsFinal { get; private set; }
        /// <summary>
        /// Null, or why the slices could not be read (an <see cref="FdkException"/>:
        /// Status Device when the GPU holding the preview failed). The event is
        /// not raised again after an error.
        /// </summary>
        public Exception Error { get; private set; }
    }
}
