// GeometryEstimator: one fdk_estimator, for the geometry estimate before (or
// instead of) a reconstruction.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;

namespace Fdk
{
    /// <summary>
    /// Estimates the detector's offset along u and its in-plane tilt from
    /// the projections of a circular scan, pushed in any order
    /// (fdk_estimator). Only the detector and the scan of the settings are
    /// used; uniform or per-view scans, not projection matrices (Status
    /// InvalidArgument). Calls are serialised here, so one estimator may be
    /// shared between threads; Dispose waits for a call in flight.
    /// </summary>
    public sealed class GeometryEstimator : IDisposable
    {
        private readonly FdkEstimatorHandle _handle;
        private readonly int _columns;
        private readonly int _rows;
        // The library wants the calls on one estimator serialised, and a
        // call's last error read before the next call.
        private readonly object _sync = new object();
        private int _disposed;

        /// <summary>An estimator for projections of <paramref name="detector"/> along <paramref name="scan"/>.</summary>
        public GeometryEstimator(Detector detector, Scan scan)
            : this(new ReconstructionSettings { Detector = detector, Scan = scan })
        {
        }

        /// <summary>
        /// An estimator for the detector and scan of <paramref name="settings"/>
        /// (the rest is not used; Volume may be left null).
        /// </summary>
        public unsafe GeometryEstimator(ReconstructionSettings settings)
        {
            if (settings == null) throw new ArgumentNullException("settings");
            if (settings.Detector == null) throw new ArgumentException("Detector is not set", "settings");
            if (settings.Scan == null) throw new ArgumentException("Scan is not set", "settings");
            // FdkLibraryNotFoundException or NotSupportedException, as for a Reconstructor.
            Reconstructor.RequireCompatibleLibrary();
            _columns = settings.Detector.Columns;
            _rows = settings.Detector.Rows;
            // A valid grid where none is given, so that no check of a field
            // the estimator does not read can refuse the config.
            var s = new ReconstructionSettings {
                Volume = settings.Volume ?? Volume.Centered(1, 1, 1, 1.0),
                Detector = settings.Detector, Scan = settings.Scan,
            };
            FdkConfigNative config = Reconstructor.BuildConfig(s);
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
                FdkEstimatorHandle handle;
                int status = NativeMethods.fdk_estimator_create(&config, out handle);
                FdkException.CheckEstimator(status, null);
                _handle = handle;
            }
            finally
            {
                if (pin.IsAllocated) pin.Free();
            }
        }

        /// <summary>
        /// Estimates from a whole scan: <paramref name="views"/> in order, view
        /// i as index i, each Rows * Columns floats of line integrals.
        /// </summary>
        public static GeometryEstimate Estimate(Detector detector, Scan scan, IEnumerable<float[]> views)
        {
            if (views == null) throw new ArgumentNullException("views");
            using (var estimator = new GeometryEstimator(detector, scan))
            {
                int index = 0;
                foreach (float[] view in views) estimator.Push(index++, view);
                return estimator.Estimate();
            }
        }

        private void ThrowIfDisposed()
        {
            if (Volatile.Read(ref _disposed) != 0 || _handle.IsClosed)
                throw new ObjectDisposedException(GetType().FullName);
        }

        /// <summary>
        /// Pushes view <paramref name="index"/>: Rows rows of Columns float32
        /// line integrals, row-major, from pixels[offset]. A view pushed again
        /// replaces the earlier one. The array can be reused at once.
        /// </summary>
        public unsafe void Push(int index, float[] pixels, int offset = 0)
        {
            if (pixels == null) throw new ArgumentNullException("pixels");
            long needed = (long)_columns * _rows;
            if (offset < 0 || offset > pixels.Length || pixels.Length - offset < needed)
                throw new ArgumentOutOfRangeException("offset",
                    "pixels needs " + needed + " floats from offset " + offset + ", has " + pixels.Length);
            fixed (float* p = pixels)
            {
                Push(index, (IntPtr)(p + offset), (long)_columns * sizeof(float));
            }
        }

        /// <summary>Pushes view <paramref name="index"/> from the first Rows * Columns floats of <paramref name="pixels"/> (read in place).</summary>
        public unsafe void Push(int index, ReadOnlySpan<float> pixels)
        {
            long needed = (long)_columns * _rows;
            if (pixels.Length < needed)
                throw new ArgumentException("pixels needs " + needed + " floats, has " + pixels.Length, "pixels");
            fixed (float* p = &MemoryMarshal.GetReference(pixels))
            {
                Push(index, (IntPtr)p, (long)_columns * sizeof(float));
            }
        }

        /// <summary>
        /// Pushes view <paramref name="index"/> from unmanaged memory: Rows rows
        /// of Columns floats, <paramref name="rowPitchBytes"/> apart (0 = contiguous).
        /// </summary>
        public void Push(int index, IntPtr pixels, long rowPitchBytes)
        {
            if (rowPitchBytes < 0) throw new ArgumentOutOfRangeException("rowPitchBytes");
            lock (_sync)
            {
                ThrowIfDisposed();
                FdkException.CheckEstimator(NativeMethods.fdk_estimator_push(_handle, index, pixels,
                                                                    new UIntPtr((ulong)rowPitchBytes)), _handle);
            }
        }

        /// <summary>
        /// The estimate from the views pushed so far. Too few views is not an
        /// error: Confidence 0 and a Basis that says why.
        /// </summary>
        public unsafe GeometryEstimate Estimate()
        {
            var e = default(FdkGeometryEstimateNative);
            NativeMethods.fdk_geometry_estimate_init(&e);
            lock (_sync)
            {
                ThrowIfDisposed();
                FdkException.CheckEstimator(NativeMethods.fdk_estimator_estimate(_handle, &e), _handle);
            }
            return new GeometryEstimate(e);
        }

        /// <summary>Destroys the native estimator. Idempotent.</summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
            lock (_sync) _handle.Dispose();
        }
    }
}
