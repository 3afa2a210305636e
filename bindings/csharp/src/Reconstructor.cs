// Reconstructor: one fdk_context, from configuration to slabs.
using System;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Fdk
{
    /// <summary>
    /// One reconstruction: configure (constructor), push projections as they
    /// arrive, <see cref="Finish()"/>, then read the volume slab by slab.
    /// Failures throw <see cref="FdkException"/> carrying the native status
    /// and message; argument mistakes the binding can see itself throw the
    /// usual ArgumentException family.
    ///
    /// Threads (those of fdk.h): one thread pushes and calls Finish while
    /// another may watch progress, cancel, and read slabs after Finish has
    /// returned. Dispose must not race other calls, except that a call in
    /// flight delays the native destroy until it returns (SafeHandle).
    /// The <see cref="Progress"/> event runs on the thread doing the work (the
    /// pushing thread or the one reading a slab); its handlers may only call
    /// <see cref="GetProgress"/>, <see cref="GetViewState"/>,
    /// <see cref="Cancel"/> and the preview reads (<see cref="GetPreviewInfo"/>,
    /// <see cref="ReadPreview()"/>, <see cref="ReadPreviewSlices"/>); an exception a
    /// handler throws is rethrown by the Reconstructor call that raised it,
    /// after the native call has returned. The <see cref="PreviewUpdated"/>
    /// event runs on a thread of the Reconstructor's own (see there).
    /// </summary>
    public sealed partial class Reconstructor : IDisposable
    {
        private readonly FdkContextHandle _handle;
        private readonly int _columns;
        private readonly int _rows;
        private readonly long _voxelsPerPlane;
        private readonly object _eventLock = new object();
        private EventHandler<ProgressEventArgs> _progress;
        private readonly IProgress<ReconstructionProgress> _progressReporter;
        private CancellationTokenRegistration _cancellation;
        private bool _hasCancellation;
        private int _disposed;

        // Set on the thread running a progress handler, to refuse re-entrant calls.
        [ThreadStatic] private static Reconstructor t_inCallback;
        // An exception thrown by a progress handler, rethrown after the native call.
        [ThreadStatic] private static ExceptionDispatchInfo t_handlerException;

        /// <summary>
        /// Validates the settings, plans the slabs and picks the backend
        /// (fdk_create). An infeasible plan fails here (Status Budget).
        /// When <paramref name="cancellationToken"/> is cancelled the
        /// reconstruction is cancelled (fdk_cancel): the call in progress and
        /// every later one throw FdkException with Status Cancelled.
        /// </summary>
        public Reconstructor(ReconstructionSettings settings,
                             CancellationToken cancellationToken = default(CancellationToken))
            : this(settings, null, cancellationToken)
        {
        }

        /// <summary>
        /// As <see cref="Reconstructor(ReconstructionSettings, CancellationToken)"/>,
        /// and reports progress to <paramref name="progress"/> after each
        /// projection stored and each slab computed. Report runs on the thread
        /// doing that work, under the rules of the <see cref="Progress"/>
        /// event; <see cref="System.Progress{T}"/> posts each report to the
        /// synchronization context it was created on (a UI thread), where any
        /// call is allowed.
        /// </summary>
        public Reconstructor(ReconstructionSettings settings, IProgress<ReconstructionProgress> progress,
                             CancellationToken cancellationToken = default(CancellationToken))
        {
            if (settings == null) throw new ArgumentNullException("settings");
            if (settings.Volume == null) throw new ArgumentException("Volume is not set", "settings");
            if (settings.Detector == null) throw new ArgumentException("Detector is not set", "settings");
            if (settings.Scan == null) throw new ArgumentException("Scan is not set", "settings");
            if (settings.Devices != null && settings.Devices.Length > FdkConfigNative.MaxDevices)
                throw new ArgumentException("at most " + FdkConfigNative.MaxDevices + " devices", "settings");

            RequireCompatibleLibrary();
            _columns = settings.Detector.Columns;
            _rows = settings.Detector.Rows;
            _voxelsPerPlane = settings.Volume.VoxelsPerPlane;
            _handle = Create(settings);
            if (progress != null)
            {
                _progressReporter = progress;
                lock (_eventLock) RegisterNativeProgress();
            }

            if (cancellationToken.CanBeCanceled)
            {
                // Runs fdk_cancel at once if the token is already cancelled.
                _cancellation = cancellationToken.Register(CancelFromToken);
                _hasCancellation = true;
            }
        }

        private static unsafe FdkContextHandle Create(ReconstructionSettings s)
        {
            FdkConfigNative config = BuildConfig(s);
            Array pinned = s.Scan.ArrayToPin();
            GCHandle pin = default(GCHandle);
            if (pinned != null) pin = GCHandle.Alloc(pinned, GCHandleType.Pinned);
            try
            {
                if (pinned != null)
                {
                    IntPtr first = pinned.Length > 0 ? pin.AddrOfPinnedObject() : IntPtr.Zero;
                    if (s.Scan is PerViewScan) config.scan.views = (FdkViewNative*)first;
                    else config.scan.matrices = (double*)first;
                }
                FdkContextHandle handle;
                int status = NativeMethods.fdk_create(&config, out handle);
                // On failure the handle is invalid (NULL): the message is the
                // thread-local create error.
                FdkException.Check(status, null);
                return handle;
            }
            finally
            {
                if (pin.IsAllocated) pin.Free();
            }
        }

        /// <summary>
        /// The native config. struct_size is our sizeof, the size of the C
        /// struct of the fdk.h this binding mirrors (checked by the tests);
        /// fdk_config_init is deliberately not called: a newer library would
        /// write its own, possibly larger, struct into ours. The defaults it
        /// would set are those of the settings classes (checked by the tests).
        /// </summary>
        internal static unsafe FdkConfigNative BuildConfig(ReconstructionSettings s)
        {
            var c = new FdkConfigNative();
            c.struct_size = (uint)sizeof(FdkConfigNative);
            s.Volume.ToNative(ref c.volume);
            s.Detector.ToNative(ref c.detector);
            c.scan.struct_size = (uint)sizeof(FdkScanNative);
            c.scan.arc_deg = 360.0;
            s.Scan.ToNative(ref c.scan);
            FilterOptions f = s.Filter ?? new FilterOptions();
            c.window = (int)f.Window;
            c.cutoff = f.Cutoff;
            c.short_scan = (int)f.ShortScan;
            c.offset_detector = (int)f.OffsetDetector;
            c.truncation_padding = f.TruncationPadding;
            c.hann_cutoff_v = f.HannCutoffV;
            c.backend = (int)s.Backend;
            int[] devices = s.Devices ?? new int[0];
            c.num_devices = devices.Length;
            for (int i = 0; i < devices.Length; ++i) c.devices[i] = devices[i];
            c.host_memory_budget = ToBytes(s.HostMemoryBudget, "HostMemoryBudget");
            c.gpu_memory_budget = ToBytes(s.GpuMemoryBudget, "GpuMemoryBudget");
            c.precision = (int)s.Precision;
            c.num_threads = s.Threads;
            c.slab_thickness = s.SlabThickness;
            c.outside_fov = (int)s.OutsideFieldOfView;
            c.store_policy = (int)s.StorePolicy;
            c.estimate_geometry = s.EstimateGeometry ? 1 : 0;
            c.preview = s.Preview ? 1 : 0;
            // Left all zero (the default grid) without a PreviewVolume.
            if (s.PreviewVolume != null) s.PreviewVolume.ToNative(ref c.preview_volume);
            return c;
        }

        private static ulong ToBytes(long value, string name)
        {
            if (value < 0) throw new ArgumentOutOfRangeException(name, "a budget cannot be negative");
            return (ulong)value;
        }

        // ---- progress ----------------------------------------------------------

        /// <summary>
        /// Raised after each projection stored and each slab computed, on the
        /// thread doing that work. The native callback is registered with the
        /// first handler and stays registered (a no-op without handlers).
        /// </summary>
        public event EventHandler<ProgressEventArgs> Progress
        {
            add
            {
                if (value == null) return;
                lock (_eventLock)
                {
                    RegisterNativeProgress();
                    _progress += value;
                }
            }
            remove
            {
                lock (_eventLock) _progress -= value;
            }
        }

        /// <summary>Registers the native callback once (under _eventLock).</summary>
        private unsafe void RegisterNativeProgress()
        {
            if (_handle.ProgressCallback != null) return;
            ThrowIfDisposed();
            var callback = new NativeMethods.ProgressCallback(OnNativeProgress);
            // Kept in the handle before the library sees it.
            _handle.ProgressCallback = callback;
            int status = NativeMethods.fdk_set_progress_callback(_handle, callback, IntPtr.Zero);
            if (status != 0) _handle.ProgressCallback = null;
            FdkException.Check(status, _handle);
        }

        private unsafe void OnNativeProgress(IntPtr userData, FdkProgressNative* progress)
        {
            // Nothing may unwind into the native caller: catch everything and
            // rethrow on this thread once the native call has returned.
            try
            {
                EventHandler<ProgressEventArgs> handlers = _progress;
                IProgress<ReconstructionProgress> reporter = _progressReporter;
                if ((handlers == null && reporter == null) || progress == null) return;
                var snapshot = new ReconstructionProgress(*progress);
                Reconstructor outer = t_inCallback;
                t_inCallback = this;
                try
                {
                    if (reporter != null) reporter.Report(snapshot);
                    if (handlers != null) handlers(this, new ProgressEventArgs(snapshot));
                }
                finally { t_inCallback = outer; }
            }
            catch (Exception e)
            {
                if (t_handlerException == null) t_handlerException = ExceptionDispatchInfo.Capture(e);
            }
        }

        // ---- calls -----------------------------------------------------------------

        private void ThrowIfDisposed()
        {
            if (_handle.IsClosed || Volatile.Read(ref _disposed) != 0)
                throw new ObjectDisposedException(GetType().FullName);
        }

        private void EnterCall()
        {
            ThrowIfDisposed();
            if (t_inCallback == this)
                throw new InvalidOperationException(
                    "a Progress handler may only call GetProgress, GetViewState, Cancel and the preview " +
                    "reads (GetPreviewInfo, ReadPreview, ReadPreviewSlices) on its Reconstructor");
        }

        /// <summary>
        /// After a native call that may have run progress handlers: the status
        /// first, then a handler's exception.
        /// </summary>
        private void Complete(int status)
        {
            ExceptionDispatchInfo handlerException = t_handlerException;
            t_handlerException = null;
            FdkException.Check(status, _handle);
            if (handlerException != null) handlerException.Throw();
        }

        /// <summary>
        /// Pushes view <paramref name="index"/>: Rows rows of Columns float32
        /// line integrals (-log(I/I0)), row-major, starting at
        /// pixels[offset]. <paramref name="measuredGeometry"/>, when given,
        /// replaces the configured geometry of this view. The projection is
        /// filtered and stored before the call returns; the array can be
        /// reused at once.
        /// </summary>
        public void PushProjection(int index, float[] pixels, int offset = 0,
                                   ViewGeometry measuredGeometry = null)
        {
            if (pixels == null) throw new ArgumentNullException("pixels");
            long needed = (long)_columns * _rows;
            if (offset < 0 || offset > pixels.Length || pixels.Length - offset < needed)
                throw new ArgumentOutOfRangeException("offset",
                    "pixels needs " + needed + " floats from offset " + offset + ", has " + pixels.Length);
            unsafe
            {
                fixed (float* p = pixels)
                {
                    PushProjection(index, (IntPtr)(p + offset), (long)_columns * sizeof(float), measuredGeometry);
                }
            }
        }

        /// <summary>
        /// Pushes view <paramref name="index"/> from unmanaged memory (e.g. a
        /// frame grabber's buffer): Rows rows of Columns floats, rows
        /// <paramref name="rowPitchBytes"/> apart (at least 4 * Columns, a
        /// multiple of 4).
        /// </summary>
        public unsafe void PushProjection(int index, IntPtr pixels, long rowPitchBytes,
                                          ViewGeometry measuredGeometry = null)
        {
            EnterCall();
            if (rowPitchBytes < 0) throw new ArgumentOutOfRangeException("rowPitchBytes");
            FdkViewNative view = default(FdkViewNative);
            FdkViewNative* viewPtr = null;
            if (measuredGeometry != null)
            {
                view = measuredGeometry.ToNative();
                viewPtr = &view;
            }
            int status = NativeMethods.fdk_push_projection(_handle, index, pixels,
                                                           new UIntPtr((ulong)rowPitchBytes), viewPtr);
            Complete(status);
        }

        /// <summary>No more projections; fewer than announced is legal.</summary>
        public void Finish()
        {
            EnterCall();
            int status = NativeMethods.fdk_finish(_handle);
            // The scan is over (a failed Finish changes nothing, but for a
            // cancellation): PreviewUpdated's final raise.
            if (status == (int)FdkStatus.Ok || status == (int)FdkStatus.Cancelled) SignalPreviewFinished();
            Complete(status);
        }

        /// <summary>
        /// <see cref="Finish()"/>, cancelling the reconstruction (fdk_cancel,
        /// irreversible, as <see cref="Cancel"/>) when
        /// <paramref name="cancellationToken"/> is cancelled before it returns.
        /// </summary>
        /// <exception cref="OperationCanceledException">The token was cancelled
        /// (the native FdkException with Status Cancelled is its InnerException).</exception>
        public void Finish(CancellationToken cancellationToken)
        {
            using (CancelOn(cancellationToken))
            {
                try { Finish(); }
                catch (FdkException e) when (e.Status == FdkStatus.Cancelled && cancellationToken.IsCancellationRequested)
                {
                    throw new OperationCanceledException("the reconstruction was cancelled", e, cancellationToken);
                }
            }
        }

        /// <summary>
        /// Where view <paramref name="index"/> stands (fdk_get_view_state):
        /// Absent, Pending, Stored, or Failed with the status that lost it (a
        /// Failed view may be pushed again). An index outside [0, views
        /// announced) throws FdkException with Status OutOfRange. Never waits;
        /// safe from any thread and from a Progress handler.
        /// </summary>
        public ViewState GetViewState(int index)
        {
            ThrowIfDisposed();
            int state, failure;
            FdkException.Check(NativeMethods.fdk_get_view_state(_handle, index, out state, out failure), _handle);
            return new ViewState(index, state, failure);
        }

        /// <summary>Slabs in the plan (fixed at construction).</summary>
        public int SlabCount
        {
            get
            {
                EnterCall();
                int count;
                Complete(NativeMethods.fdk_slab_count(_handle, out count));
                return count;
            }
        }

        /// <summary>The y planes and size of slab <paramref name="slab"/> (fdk_get_slab_info); fixed at construction.</summary>
        public unsafe SlabInfo GetSlabInfo(int slab)
        {
            EnterCall();
            var info = new FdkSlabInfoNative { struct_size = (uint)sizeof(FdkSlabInfoNative) };
            Complete(NativeMethods.fdk_get_slab_info(_handle, slab, &info));
            return new SlabInfo(slab, info);
        }

        /// <summary>
        /// Copies slab <paramref name="slab"/> into buffer[offset ..], which
        /// needs GetSlabInfo(slab).FloatCount floats. Only after Finish; from
        /// any thread. Blocks until the slab is computed (see
        /// <see cref="IsSlabReady"/> for the way not to block); slabs may be
        /// read in any order and more than once.
        /// </summary>
        public void ReadSlab(int slab, float[] buffer, int offset = 0)
        {
            if (buffer == null) throw new ArgumentNullException("buffer");
            if (offset < 0 || offset > buffer.Length) throw new ArgumentOutOfRangeException("offset");
            unsafe
            {
                fixed (float* p = buffer)
                {
                    ReadSlab(slab, (IntPtr)(p + offset), (long)(buffer.Length - offset) * sizeof(float));
                }
            }
        }

        /// <summary>Copies slab <paramref name="slab"/> to unmanaged memory of <paramref name="bufferBytes"/>.</summary>
        public void ReadSlab(int slab, IntPtr buffer, long bufferBytes)
        {
            EnterCall();
            if (bufferBytes < 0) throw new ArgumentOutOfRangeException("bufferBytes");
            Complete(NativeMethods.fdk_read_slab(_handle, slab, buffer, new UIntPtr((ulong)bufferBytes)));
        }

        /// <summary>
        /// Copies slab <paramref name="slab"/> into <paramref name="buffer"/>
        /// from byte <paramref name="byteOffset"/> on: by DMA from the GPUs when
        /// the buffer is page-locked (see <see cref="HostBuffer"/>). The offset
        /// has no default, so that ReadSlab(slab, null) still means the array
        /// overload.
        /// </summary>
        public void ReadSlab(int slab, HostBuffer buffer, long byteOffset)
        {
            if (buffer == null) throw new ArgumentNullException("buffer");
            if (byteOffset < 0 || byteOffset > buffer.ByteLength) throw new ArgumentOutOfRangeException("byteOffset");
            buffer.Use(p => ReadSlab(slab, new IntPtr(p.ToInt64() + byteOffset), buffer.ByteLength - byteOffset));
        }

        /// <summary>
        /// Never blocks (fdk_slab_ready): true when <see cref="ReadSlab(int)"/>
        /// would not wait for a computation; otherwise false, and the slab is
        /// computed in the background so that a later call finds it ready.
        /// Poll it and read once it says true. Only after Finish; from any
        /// thread, also while another thread reads a slab. A slab too large
        /// for what the host budget leaves the slab cache never becomes ready
        /// (a read computes it), and slabs computed ahead keep their room until
        /// read. A background computation that failed throws here, once.
        /// </summary>
        public bool IsSlabReady(int slab)
        {
            EnterCall();
            int ready;
            Complete(NativeMethods.fdk_slab_ready(_handle, slab, out ready));
            return ready != 0;
        }

        /// <summary>Slab <paramref name="slab"/> in a new array.</summary>
        public float[] ReadSlab(int slab)
        {
            SlabInfo info = GetSlabInfo(slab);
            var buffer = new float[checked((int)info.FloatCount)];
            ReadSlab(slab, buffer, 0);
            return buffer;
        }

        /// <summary>
        /// The whole volume in one array (x fastest, then z, then y). Only for
        /// volumes that fit in one .NET array; read slab by slab otherwise.
        /// </summary>
        public float[] ReadVolume()
        {
            int count = SlabCount;
            SlabInfo last = GetSlabInfo(count - 1);
            var volume = new float[checked((int)(last.YEnd * _voxelsPerPlane))];
            for (int s = 0; s < count; ++s)
            {
                SlabInfo info = GetSlabInfo(s);
                ReadSlab(s, volume, checked((int)(info.YBegin * _voxelsPerPlane)));
            }
            return volume;
        }

        /// <summary>Never waits for a push, finish or slab in progress. Allowed in a Progress handler.</summary>
        public unsafe ReconstructionProgress GetProgress()
        {
            ThrowIfDisposed();
            var p = new FdkProgressNative { struct_size = (uint)sizeof(FdkProgressNative) };
            FdkException.Check(NativeMethods.fdk_get_progress(_handle, &p), _handle);
            return new ReconstructionProgress(p);
        }

        /// <summary>
        /// Cancels (fdk_cancel): the call in progress and every later push,
        /// finish or slab read throw FdkException with Status Cancelled.
        /// Irreversible; safe from any thread and from a Progress handler.
        /// </summary>
        public void Cancel()
        {
            ThrowIfDisposed();
            FdkException.Check(NativeMethods.fdk_cancel(_handle), _handle);
        }

        /// <summary>
        /// Calls fdk_cancel when <paramref name="token"/> is cancelled (at once if
        /// it already is), until the returned registration is disposed.
        /// </summary>
        private CancellationTokenRegistration CancelOn(CancellationToken token)
        {
            return token.CanBeCanceled ? token.Register(CancelFromToken) : default(CancellationTokenRegistration);
        }

        private void CancelFromToken()
        {
            // May run on any thread, also after Dispose began: a closed handle
            // makes the P/Invoke throw ObjectDisposedException, and an open one
            // is kept alive by the call itself.
            try { NativeMethods.fdk_cancel(_handle); }
            catch (ObjectDisposedException) { }
        }

        /// <summary>The projection store now (fdk_get_store_info): views, bytes, ratio, float16 bounds.</summary>
        public unsafe StoreInfo GetStoreInfo()
        {
            EnterCall();
            var info = new FdkStoreInfoNative { struct_size = (uint)sizeof(FdkStoreInfoNative) };
            Complete(NativeMethods.fdk_get_store_info(_handle, &info));
            return new StoreInfo(info);
        }

        /// <summary>What construction decided (fdk_get_plan_info): backend, slabs, weightings, budgets, store fit.</summary>
        public unsafe PlanInfo GetPlanInfo()
        {
            EnterCall();
            var info = new FdkPlanInfoNative { struct_size = (uint)sizeof(FdkPlanInfoNative) };
            Complete(NativeMethods.fdk_get_plan_info(_handle, &info));
            return new PlanInfo(info);
        }

        /// <summary>Accumulated timings. Waits for a push, finish or read in progress on another thread.</summary>
        public unsafe Timings GetTimings()
        {
            EnterCall();
            var t = new FdkTimingsNative { struct_size = (uint)sizeof(FdkTimingsNative) };
            Complete(NativeMethods.fdk_get_timings(_handle, &t));
            return new Timings(t);
        }

        /// <summary>
        /// Per-GPU figures (fdk_get_device_stats); no devices on the CPU
        /// backend. Waits for a push, finish or slab computation in progress
        /// on another thread.
        /// </summary>
        public unsafe DeviceStats GetDeviceStats()
        {
            EnterCall();
            var n = new FdkDeviceStatsNative { struct_size = (uint)sizeof(FdkDeviceStatsNative) };
            Complete(NativeMethods.fdk_get_device_stats(_handle, &n));
            return new DeviceStats(n);
        }

        /// <summary>
        /// The geometry estimate from the projections pushed so far
        /// (fdk_get_geometry_estimate); any time, also after Finish. Needs
        /// <see cref="ReconstructionSettings.EstimateGeometry"/>, else
        /// FdkException with Status InvalidState. The volume stays the nominal
        /// geometry's: to apply the estimate, push the raw projections again
        /// into a Reconstructor whose scan went through
        /// <see cref="GeometryEstimate.Apply(Scan)"/>.
        /// </summary>
        public unsafe GeometryEstimate GetGeometryEstimate()
        {
            EnterCall();
            var e = default(FdkGeometryEstimateNative);
            NativeMethods.fdk_geometry_estimate_init(&e);
            Complete(NativeMethods.fdk_get_geometry_estimate(_handle, &e));
            return new GeometryEstimate(e);
        }

        /// <summary>
        /// Stops <see cref="PreviewUpdated"/> (waiting for a raise in progress,
        /// unless called from its handler) and destroys the native context
        /// (after any call in flight returns). Idempotent.
        /// </summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
            StopPreview();
            if (_hasCancellation) _cancellation.Dispose();
            _handle.Dispose();
        }

        // ---- library -----------------------------------------------------------------

        /// <summary>The loaded library's version as MAJOR*10000 + MINOR*100 + PATCH.</summary>
        /// <exception cref="FdkLibraryNotFoundException">The native library cannot be loaded.</exception>
        public static int NativeVersionNumber
        {
            get
            {
                NativeLibraryProbe.EnsureLoaded();
                return (int)NativeMethods.fdk_version();
            }
        }

        /// <summary>The loaded library's "MAJOR.MINOR.PATCH".</summary>
        public static string NativeVersion
        {
            get
            {
                NativeLibraryProbe.EnsureLoaded();
                return NativeMethods.CopyString(NativeMethods.fdk_version_string());
            }
        }

        /// <summary>The major version of fdk.h this binding mirrors; the library's must match.</summary>
        public const int BindingVersionMajor = 0;

        /// <summary>
        /// The structs change only across major versions; a library of another
        /// major version would refuse every struct (or worse), so say so plainly.
        /// </summary>
        internal static void RequireCompatibleLibrary()
        {
            int major = NativeVersionNumber / 10000;
            if (major != BindingVersionMajor)
                throw new NotSupportedException("the fdk library loaded is version " + NativeVersion +
                    "; this binding needs major version " + BindingVersionMajor);
        }
    }
}
