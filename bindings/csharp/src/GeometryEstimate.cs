// What fdk estimated of a scan's geometry (fdk_geometry_estimate), and the
// correction it stands for, applied by the library itself
// (fdk_apply_geometry_estimate) so that C, C# and Python agree on it.
using System;

namespace Fdk
{
    /// <summary>FDK_ESTIMATE_*: what a <see cref="GeometryEstimate"/> holds and how sure it is.</summary>
    [Flags]
    public enum GeometryEstimateFlags
    {
        /// <summary>Nothing estimated.</summary>
        None = 0,
        /// <summary>The offset along u is estimated.</summary>
        Offset = 1,
        /// <summary>The in-plane tilt is estimated.</summary>
        Tilt = 2,
        /// <summary>The views hold too little structure that changes with angle to be sure.</summary>
        LowStructure = 4,
        /// <summary>Too few views had an opposite view.</summary>
        FewPairs = 8,
    }

    /// <summary>
    /// The detector's offset along u (the column through the rotation axis)
    /// and its tilt in its own plane, estimated from a scan's own
    /// projections: the corrected geometry of every view has
    /// ProjectionOffsetX + <see cref="OffsetUMm"/> and InPlaneAngleDeg +
    /// <see cref="TiltDeg"/> (<see cref="Apply(ViewGeometry)"/>,
    /// <see cref="Apply(Scan)"/>). Immutable.
    /// </summary>
    public sealed class GeometryEstimate
    {
        // Kept whole: Apply hands it back to the library as it came.
        private readonly FdkGeometryEstimateNative _native;

        internal unsafe GeometryEstimate(FdkGeometryEstimateNative native)
        {
            _native = native;
            byte* basis = native.basis;
            int length = 0;
            while (length < FdkGeometryEstimateNative.BasisBytes && basis[length] != 0) ++length;
            Basis = length == 0 ? string.Empty : System.Text.Encoding.UTF8.GetString(basis, length);
        }

        /// <summary>The offset along u in the geometry's length unit: add it to every view's ProjectionOffsetX.</summary>
        public double OffsetUMm { get { return _native.offset_u_mm; } }
        /// <summary>The same offset in detector columns.</summary>
        public double OffsetUPixels { get { return _native.offset_u_pixels; } }
        /// <summary>The in-plane tilt in degrees: add it to every view's InPlaneAngleDeg.</summary>
        public double TiltDeg { get { return _native.tilt_deg; } }
        /// <summary>One standard deviation of <see cref="OffsetUPixels"/>.</summary>
        public double OffsetSigmaPixels { get { return _native.offset_sigma_pixels; } }
        /// <summary>One standard deviation of <see cref="TiltDeg"/>.</summary>
        public double TiltSigmaDeg { get { return _native.tilt_sigma_deg; } }
        /// <summary>In [0, 1]; below 0.5 the estimate is not to be applied without a look.</summary>
        public double Confidence { get { return _native.confidence; } }
        /// <summary>Pairs of views compared.</summary>
        public int ViewPairs { get { return _native.view_pairs; } }
        /// <summary>Views that took part.</summary>
        public int ViewsUsed { get { return _native.views_used; } }
        /// <summary>Detector rows kept of each view.</summary>
        public int RowsUsed { get { return _native.rows_used; } }
        /// <summary>What is estimated and how sure (FDK_ESTIMATE_*).</summary>
        public GeometryEstimateFlags Flags { get { return (GeometryEstimateFlags)_native.flags; } }
        /// <summary>What it was computed from, in the library's words (with too few views: why there is no estimate).</summary>
        public string Basis { get; private set; }

        /// <summary>Whether the offset is estimated (<see cref="GeometryEstimateFlags.Offset"/>).</summary>
        public bool OffsetEstimated { get { return (Flags & GeometryEstimateFlags.Offset) != 0; } }
        /// <summary>Whether the tilt is estimated (<see cref="GeometryEstimateFlags.Tilt"/>).</summary>
        public bool TiltEstimated { get { return (Flags & GeometryEstimateFlags.Tilt) != 0; } }
        /// <summary><see cref="GeometryEstimateFlags.LowStructure"/> is set.</summary>
        public bool LowStructure { get { return (Flags & GeometryEstimateFlags.LowStructure) != 0; } }
        /// <summary><see cref="GeometryEstimateFlags.FewPairs"/> is set.</summary>
        public bool FewPairs { get { return (Flags & GeometryEstimateFlags.FewPairs) != 0; } }

        /// <summary>
        /// <paramref name="view"/> corrected by this estimate
        /// (fdk_apply_geometry_estimate), as a new ViewGeometry.
        /// </summary>
        public unsafe ViewGeometry Apply(ViewGeometry view)
        {
            if (view == null) throw new ArgumentNullException("view");
            FdkViewNative n = view.ToNative();
            FdkGeometryEstimateNative e = _native;
            FdkException.Check(NativeMethods.fdk_apply_geometry_estimate(&e, &n, &n), null);
            return ViewGeometry.FromNative(n);
        }

        /// <summary>
        /// <paramref name="scan"/> with every view corrected, of the same kind:
        /// a uniform scan stays uniform (its shared geometry corrected), a
        /// per-view scan has each view corrected. A scan of projection
        /// matrices cannot be (ArgumentException): the estimate is of RTK
        /// parameters, which matrices do not carry.
        /// </summary>
        public Scan Apply(Scan scan)
        {
            if (scan == null) throw new ArgumentNullException("scan");
            var uniform = scan as UniformScan;
            if (uniform != null)
                return new UniformScan(uniform.ViewCount, Apply(uniform.Geometry), uniform.FirstAngleDeg,
                                       uniform.ArcDeg);
            var perView = scan as PerViewScan;
            if (perView != null)
            {
                var views = new ViewGeometry[perView.ViewCount];
                for (int i = 0; i < views.Length; ++i) views[i] = Apply(perView.ViewOf(i));
                return Scan.FromViews(views);
            }
            throw new ArgumentException("a scan of projection matrices cannot be corrected: the estimate is of " +
                                        "RTK parameters (ProjectionOffsetX, InPlaneAngleDeg)", "scan");
        }

        /// <summary>The estimate in one line: offset, tilt, their sigmas, confidence, counts, flags and basis.</summary>
        public override string ToString()
        {
            return string.Format(System.Globalization.CultureInfo.InvariantCulture,
                "offset {0:+0.000;-0.000} px ({1:G4} mm) +/- {2:0.000} px, tilt {3:+0.0000;-0.0000} deg " +
                "+/- {4:0.0000} deg, confidence {5:0.00} ({6} view pairs of {7} views, {8} rows; flags: {9}): {10}",
                OffsetUPixels, OffsetUMm, OffsetSigmaPixels, TiltDeg, TiltSigmaDeg, Confidence,
                ViewPairs, ViewsUsed, RowsUsed, Flags, Basis);
        }
    }
}
