// The live preview (fdk.h 0.8, ReconstructionSettings.Preview): reads of the
// coarse volume the library reconstructs alongside, at any moment, and the
// PreviewUpdated event, raised with three slices of it from a thread of the
// Reconstructor's own while the scan goes on, and once more after Finish.
using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;

namespace Fdk
{
    public sealed partial class Reconstructor
    {
        private readonly object _previewLock = new object();
        private EventHandler<PreviewEventArgs> _previewUpdated;
        // Under _previewLock: the raising thread, started with the first
        // handler; what it is told (stop: Dispose; finished: Finish returned).
        private Thread _previewThread;
        private bool _previewStop;
        private bool _previewFinished;
        private TimeSpan _previewInterval = TimeSpan.FromSeconds(1);
        private Exception _previewError;
        // The grid (fixed at construction), read once.
        private PreviewInfo _previewGrid;

        /// <summary>
        /// The preview's grid and state now (fdk_get_preview_info). Needs
        /// <see cref="ReconstructionSettings.Preview"/>, else FdkException with
        /// Status InvalidState. Never waits for a push, Finish or slab read;
        /// from any thread, also from a Progress or PreviewUpdated handler.
        /// </summary>
        public unsafe PreviewInfo GetPreviewInfo()
        {
            ThrowIfDisposed();
            var info = default(FdkPreviewInfoNative);
            NativeMethods.fdk_preview_info_init(&info);
            FdkException.Check(NativeMethods.fdk_get_preview_info(_handle, &info), _handle);
            return new PreviewInfo(info);
        }

        private PreviewInfo PreviewGrid()
        {
            PreviewInfo grid = Volatile.Read(ref _previewGrid);
            if (grid == null)
            {
                grid = GetPreviewInfo();
                Volatile.Write(ref _previewGrid, grid);
            }
            return grid;
        }

        /// <summary>
        /// The whole preview volume now, in a new array of
        /// <see cref="PreviewInfo.VoxelCount"/> floats (x fastest, then z, then
        /// y, as a slab). Any time after construction, also during the scan and
        /// after Finish, before any slab is read: values are the partial FDK sum
        /// divided by <see cref="PreviewInfo.Coverage"/>. Never waits for a push,
        /// Finish or slab read (at most for the view being added); from any
        /// thread, also from a Progress or PreviewUpdated handler. Errors:
        /// FdkException with Status InvalidState (no
        /// <see cref="ReconstructionSettings.Preview"/>) or Device (the GPU
        /// holding the preview failed; the volume itself is unaffected).
        /// </summary>
        public float[] ReadPreview()
        {
            PreviewInfo info;
            return ReadPreview(out info);
        }

        /// <summary>
        /// <see cref="ReadPreview()"/>, and the preview's state at the moment it
        /// was read in <paramref name="info"/>.
        /// </summary>
        public float[] ReadPreview(out PreviewInfo info)
        {
            var volume = new float[checked((int)PreviewGrid().VoxelCount)];
            info = ReadPreview(volume, 0);
            return volume;
        }

        /// <summary>
        /// Copies the whole preview volume into buffer[offset ..], which needs
        /// <see cref="PreviewInfo.VoxelCount"/> floats (x fastest, then z, then
        /// y); returns the preview's state at that moment. Rules and errors as
        /// <see cref="ReadPreview()"/>; a buffer too short throws FdkException
        /// with Status InvalidArgument.
        /// </summary>
        public unsafe PreviewInfo ReadPreview(float[] buffer, int offset = 0)
        {
            if (buffer == null) throw new ArgumentNullException("buffer");
            if (offset < 0 || offset > buffer.Length) throw new ArgumentOutOfRangeException("offset");
            fixed (float* p = buffer)
            {
                return ReadPreview((IntPtr)(p + offset), (long)(buffer.Length - offset) * sizeof(float));
            }
        }

        /// <summary>
        /// Copies the whole preview volume straight into
        /// <paramref name="destination"/>; see <see cref="ReadPreview(float[], int)"/>.
        /// </summary>
        public unsafe PreviewInfo ReadPreview(Span<float> destination)
        {
            fixed (float* p = &MemoryMarshal.GetReference(destination))
            {
                return ReadPreview((IntPtr)p, (long)destination.Length * sizeof(float));
            }
        }

        /// <summary>
        /// Copies the whole preview volume to unmanaged memory of
        /// <paramref name="bufferBytes"/>; see <see cref="ReadPreview(float[], int)"/>.
        /// </summary>
        public unsafe PreviewInfo ReadPreview(IntPtr buffer, long bufferBytes)
        {
            ThrowIfDisposed();
            if (bufferBytes < 0) throw new ArgumentOutOfRangeException("bufferBytes");
            var info = default(FdkPreviewInfoNative);
            NativeMethods.fdk_preview_info_init(&info);
            FdkException.Check(NativeMethods.fdk_read_preview(_handle, (float*)buffer.ToPointer(), new UIntPtr((ulong)bufferBytes),
                                                              &info), _handle);
            return new PreviewInfo(info);
        }

        /// <summary>
        /// Three orthogonal slices of one moment of the preview
        /// (fdk_read_preview_slices), crossing at voxel (<paramref name="x"/>,
        /// <paramref name="y"/>, <paramref name="z"/>); -1 (the default) is the
        /// middle of that axis (size / 2). The slices come in new arrays, with
        /// the crossing point resolved and the preview's state at that moment.
        /// An index outside the grid throws FdkException with Status
        /// OutOfRange; otherwise rules and errors as <see cref="ReadPreview()"/>.
        /// </summary>
        public unsafe PreviewSlices ReadPreviewSlices(int x = -1, int y = -1, int z = -1)
        {
            ThrowIfDisposed();
            PreviewInfo grid = PreviewGrid();
            int nx = grid.SizeX, ny = grid.SizeY, nz = grid.SizeZ;
            var xs = new float[checked(nz * ny)];
            var ys = new float[checked(nx * nz)];
            var zs = new float[checked(nx * ny)];
            var slices = new FdkPreviewSlicesNative { struct_size = (uint)sizeof(FdkPreviewSlicesNative) };
            slices.at[0] = x;
            slices.at[1] = y;
            slices.at[2] = z;
            var info = default(FdkPreviewInfoNative);
            NativeMethods.fdk_preview_info_init(&info);
            fixed (float* px = xs, py = ys, pz = zs)
            {
                slices.x_slice = px;
                slices.x_slice_bytes = new UIntPtr((ulong)xs.Length * sizeof(float));
                slices.y_slice = py;
                slices.y_slice_bytes = new UIntPtr((ulong)ys.Length * sizeof(float));
                slices.z_slice = pz;
                slices.z_slice_bytes = new UIntPtr((ulong)zs.Length * sizeof(float));
                FdkException.Check(NativeMethods.fdk_read_preview_slices(_handle, &slices, &info), _handle);
            }
            return new PreviewSlices(x == -1 ? nx / 2 : x, y == -1 ? ny / 2 : y, z == -1 ? nz / 2 : z,
                                     new PreviewSlice(xs, nz, ny), new PreviewSlice(ys, nx, nz),
                                     new PreviewSlice(zs, nx, ny), new PreviewInfo(info));
        }

        // ---- the event ---------------------------------------------------------------

        /// <summary>
        /// Raised every <see cref="PreviewInterval"/> while the scan goes on,
        /// with the slices through the middle of the preview
        /// (<see cref="ReadPreviewSlices"/>), and once more, with
        /// <see cref="PreviewEventArgs.IsFinal"/>, as soon as
        /// <see cref="Finish()"/> has returned (successfully, or with Status
        /// Cancelled; a Finish that fails otherwise changes nothing and the
        /// raising goes on). Needs <see cref="ReconstructionSettings.Preview"/>:
        /// the first handler added without it throws FdkException with Status
        /// InvalidState.
        ///
        /// Thread: the event runs on a background thread of this Reconstructor's
        /// own ("Fdk preview"), started by the first handler added and ending
        /// after the final raise, or at Dispose; never on the pushing thread,
        /// and never two raises at once. Finish does not wait for the final
        /// raise. Dispose does: it stops the raising and joins the thread (a
        /// raise in progress completes, no further one begins, the final one
        /// included), so a handler must not wait for the thread calling Dispose
        /// (e.g. Control.Invoke onto a UI thread that disposes; use BeginInvoke).
        /// Handlers may call the preview reads, GetProgress, GetViewState and
        /// Cancel, and Dispose; other calls follow fdk.h's thread rules as from
        /// any other thread. A handler added after Finish gets the final raise
        /// at once, if the thread did not run yet; one added after the final
        /// raise (or after the raising stopped) gets nothing.
        ///
        /// Errors never escape on that thread: when reading the slices fails,
        /// the event is raised once more with <see cref="PreviewEventArgs.Error"/>
        /// set (and no slices) and the raising stops; when a handler throws, the
        /// raising stops. Either exception is kept in <see cref="PreviewError"/>.
        /// </summary>
        public event EventHandler<PreviewEventArgs> PreviewUpdated
        {
            add
            {
                if (value == null) return;
                lock (_previewLock)
                {
                    ThrowIfDisposed();
                    if (_previewThread == null)
                    {
                        PreviewGrid(); // InvalidState without the preview
                        _previewUpdated += value;
                        var thread = new Thread(PreviewLoop) { IsBackground = true, Name = "Fdk preview" };
                        thread.Start();
                        _previewThread = thread;
                    }
                    else
                    {
                        _previewUpdated += value;
                    }
                }
            }
            remove
            {
                lock (_previewLock) _previewUpdated -= value;
            }
        }

        /// <summary>
        /// The time between two raises of <see cref="PreviewUpdated"/>, from the
        /// end of one to the start of the next; 1 s by default. A change applies
        /// to the wait in progress. Positive, at most int.MaxValue milliseconds.
        /// </summary>
        public TimeSpan PreviewInterval
        {
            get { lock (_previewLock) return _previewInterval; }
            set
            {
                if (value <= TimeSpan.Zero || value.TotalMilliseconds > int.MaxValue)
                    throw new ArgumentOutOfRangeException("value", "PreviewInterval must be positive");
                lock (_previewLock)
                {
                    _previewInterval = value;
                    Monitor.PulseAll(_previewLock);
                }
            }
        }

        /// <summary>
        /// Null while <see cref="PreviewUpdated"/> is raised normally; else the
        /// exception that stopped it: the preview read's FdkException (also
        /// given to the handlers as <see cref="PreviewEventArgs.Error"/>) or the
        /// exception a handler threw.
        /// </summary>
        public Exception PreviewError
        {
            get { lock (_previewLock) return _previewError; }
        }

        private bool PreviewStopping
        {
            get { lock (_previewLock) return _previewStop; }
        }

        private void PreviewLoop()
        {
            Stopwatch sinceRaise = Stopwatch.StartNew();
            while (true)
            {
                bool final;
                lock (_previewLock)
                {
                    while (true)
                    {
                        if (_previewStop) return;
                        if (_previewFinished) break;
                        long remaining = (long)Math.Ceiling(_previewInterval.TotalMilliseconds) -
                                         sinceRaise.ElapsedMilliseconds;
                        if (remaining <= 0) break;
                        Monitor.Wait(_previewLock, (int)Math.Min(remaining, int.MaxValue));
                    }
                    final = _previewFinished;
                }
                bool goOn = RaisePreview(final);
                sinceRaise.Restart();
                if (!goOn || final) return;
            }
        }

        /// <summary>One raise; false when the raising is to stop. Throws nothing.</summary>
        private bool RaisePreview(bool final)
        {
            EventHandler<PreviewEventArgs> handlers;
            lock (_previewLock) handlers = _previewUpdated;
            if (handlers == null) return true;
            PreviewEventArgs args;
            try
            {
                args = new PreviewEventArgs(ReadPreviewSlices(), final, null);
            }
            catch (Exception e)
            {
                // Disposed under us: stop quietly.
                if (e is ObjectDisposedException || PreviewStopping) return false;
                KeepPreviewError(e);
                args = new PreviewEventArgs(null, final, e);
            }
            try
            {
                handlers(this, args);
            }
            catch (Exception e)
            {
                if (!PreviewStopping) KeepPreviewError(e);
                return false;
            }
            return args.Error == null;
        }

        private void KeepPreviewError(Exception e)
        {
            lock (_previewLock)
            {
                if (_previewError == null) _previewError = e;
            }
        }

        /// <summary>Finish returned (OK or Cancelled): the final raise, at once.</summary>
        private void SignalPreviewFinished()
        {
            lock (_previewLock)
            {
                _previewFinished = true;
                Monitor.PulseAll(_previewLock);
            }
        }

        /// <summary>Dispose: no further raise; joins the thread unless called on it.</summary>
        private void StopPreview()
        {
            Thread thread;
            lock (_previewLock)
            {
                _previewStop = true;
                Monitor.PulseAll(_previewLock);
                thread = _previewThread;
            }
            if (thread != null && thread != Thread.CurrentThread) thread.Join();
        }
    }
}
