// The configuration of a reconstruction, in .NET terms. Units and
// conventions are those of fdk.h: lengths in one unit (normally mm),
// angles in degrees, ITK-style origin (centre of the first voxel/pixel),
// RTK's circular geometry with the rotation axis along y.
using System;

namespace Fdk
{
    /// <summary>fdk_window: the apodisation of the ramp filter.</summary>
    public enum FilterWindow
    {
        /// <summary>The plain ramp, cut at <see cref="FilterOptions.Cutoff"/>.</summary>
        RamLak = 0,
        /// <summary>The ramp times a sinc (Shepp-Logan).</summary>
        SheppLogan = 1,
        /// <summary>The ramp times a cosine.</summary>
        Cosine = 2,
        /// <summary>The ramp times a Hamming window.</summary>
        Hamming = 3,
        /// <summary>The ramp times a Hann window.</summary>
        Hann = 4,
    }

    /// <summary>fdk_switch: a weighting forced on, off, or chosen from the geometry.</summary>
    public enum Activation
    {
        /// <summary>Chosen from the geometry (the default).</summary>
        Auto = 0,
        /// <summary>Always applied.</summary>
        On = 1,
        /// <summary>Never applied.</summary>
        Off = 2,
    }

    /// <summary>fdk_outside_fov: what a voxel outside the field of view holds.</summary>
    public enum OutsideFieldOfView
    {
        /// <summary>The partial sum of the views that see it, as RTK's rtkfdk (the default).</summary>
        Backproject = 0,
        /// <summary>Zero, and not computed (faster).</summary>
        Zero = 1,
    }

    /// <summary>
    /// fdk_store_policy: what the store does when the compressed projections
    /// would outgrow the host budget.
    /// </summary>
    public enum StorePolicy
    {
        /// <summary>
        /// The default: while the views still to come would not fit at
        /// float32 (at the compression ratio measured so far), each is stored
        /// as float16, with the error bounds of <see cref="StoreInfo"/>; a view
        /// fails with Status Budget only when even that leaves no room.
        /// </summary>
        ReducePrecision = 0,
        /// <summary>Never reduce: a view that does not fit fails with Status Budget.</summary>
        Strict = 1,
    }

    /// <summary>fdk_store_fit: whether the announced scan fits the store (PlanInfo.StoreFit).</summary>
    public enum StoreFit
    {
        /// <summary>For certain: every view's worst case fits (at float16 under ReducePrecision).</summary>
        Fits = 0,
        /// <summary>At the compression ratio typical of noisy filtered projections
        /// (1.2 for float32, 2.4 for float16).</summary>
        Likely = 1,
        /// <summary>Not even then: expect Status Budget before the end unless fewer views arrive.</summary>
        Unlikely = 2,
    }

    /// <summary>fdk_backend.</summary>
    public enum Backend
    {
        /// <summary>CUDA when built in and a GPU is usable, else the CPU.</summary>
        Auto = 0,
        /// <summary>The CPU backend (always built in).</summary>
        Cpu = 1,
        /// <summary>CUDA GPUs; Status BackendUnavailable when none is usable or the library was built without CUDA.</summary>
        Cuda = 2,
    }

    /// <summary>fdk_precision of the stored filtered projections.</summary>
    public enum Precision
    {
        /// <summary>Bit-exact.</summary>
        Float32 = 0,
        /// <summary>Half the memory; error bound in <see cref="StoreInfo"/>.</summary>
        Float16 = 1,
    }

    /// <summary>fdk_phase.</summary>
    public enum Phase
    {
        /// <summary>Projections arriving (before Finish).</summary>
        Acquiring = 0,
        /// <summary>After Finish: slabs being computed.</summary>
        Reconstructing = 1,
        /// <summary>Every slab computed at least once.</summary>
        Done = 2,
        /// <summary>Cancelled (Cancel or a cancelled token): every later call throws Status Cancelled.</summary>
        Cancelled = 3,
    }

    /// <summary>fdk_view_state: where a view stands (see <see cref="ViewState"/>).</summary>
    public enum ViewStateKind
    {
        /// <summary>Not pushed, or its push threw.</summary>
        Absent = 0,
        /// <summary>Accepted; being filtered and stored.</summary>
        Pending = 1,
        /// <summary>In the reconstruction.</summary>
        Stored = 2,
        /// <summary>Accepted, then lost in the background (reported once by a
        /// later push or Finish); may be pushed again.</summary>
        Failed = 3,
    }

    /// <summary>The voxel grid (fdk_volume). Sizes in voxels along x, y, z.</summary>
    public sealed class Volume
    {
        /// <summary>Voxels along x, in [1, 65536].</summary>
        public int SizeX { get; set; }
        /// <summary>Voxels along y (the rotation axis; slabs are ranges of y planes), in [1, 65536].</summary>
        public int SizeY { get; set; }
        /// <summary>Voxels along z, in [1, 65536].</summary>
        public int SizeZ { get; set; }
        /// <summary>Voxel size along x (length unit of the geometry, normally mm).</summary>
        public double SpacingX { get; set; }
        /// <summary>Voxel size along y.</summary>
        public double SpacingY { get; set; }
        /// <summary>Voxel size along z.</summary>
        public double SpacingZ { get; set; }
        /// <summary>Centre of voxel (0, 0, 0).</summary>
        public double OriginX { get; set; }
        /// <summary>y of the centre of voxel (0, 0, 0).</summary>
        public double OriginY { get; set; }
        /// <summary>z of the centre of voxel (0, 0, 0).</summary>
        public double OriginZ { get; set; }

        /// <summary>An empty grid of unit spacing at the origin; set the sizes (or use <see cref="Centered"/>).</summary>
        public Volume() { SpacingX = SpacingY = SpacingZ = 1.0; }

        /// <summary>A grid of isotropic voxels centred on the isocentre.</summary>
        public static Volume Centered(int sizeX, int sizeY, int sizeZ, double spacing)
        {
            return new Volume {
                SizeX = sizeX, SizeY = sizeY, SizeZ = sizeZ,
                SpacingX = spacing, SpacingY = spacing, SpacingZ = spacing,
                OriginX = -0.5 * (sizeX - 1) * spacing,
                OriginY = -0.5 * (sizeY - 1) * spacing,
                OriginZ = -0.5 * (sizeZ - 1) * spacing,
            };
        }

        /// <summary>Voxels in one y plane (one axial slice).</summary>
        public long VoxelsPerPlane { get { return (long)SizeX * SizeZ; } }

        /// <summary>A copy of this grid.</summary>
        public Volume Clone() { return (Volume)MemberwiseClone(); }

        internal static unsafe Volume FromNative(FdkVolumeNative n)
        {
            return new Volume {
                SizeX = n.size[0], SizeY = n.size[1], SizeZ = n.size[2],
                SpacingX = n.spacing[0], SpacingY = n.spacing[1], SpacingZ = n.spacing[2],
                OriginX = n.origin[0], OriginY = n.origin[1], OriginZ = n.origin[2],
            };
        }

        internal unsafe void ToNative(ref FdkVolumeNative n)
        {
            fixed (FdkVolumeNative* p = &n)
            {
                p->size[0] = SizeX; p->size[1] = SizeY; p->size[2] = SizeZ;
                p->spacing[0] = SpacingX; p->spacing[1] = SpacingY; p->spacing[2] = SpacingZ;
                p->origin[0] = OriginX; p->origin[1] = OriginY; p->origin[2] = OriginZ;
            }
        }
    }

    /// <summary>The flat panel (fdk_detector): Columns along u, Rows along v.</summary>
    public sealed class Detector
    {
        /// <summary>Pixels along u (a projection row), in [2, 65536].</summary>
        public int Columns { get; set; }
        /// <summary>Pixels along v (rows of a projection), in [2, 65536].</summary>
        public int Rows { get; set; }
        /// <summary>Pixel pitch along u (length unit of the geometry).</summary>
        public double SpacingU { get; set; }
        /// <summary>Pixel pitch along v.</summary>
        public double SpacingV { get; set; }
        /// <summary>Centre of pixel (0, 0) in detector coordinates.</summary>
        public double OriginU { get; set; }
        /// <summary>v of the centre of pixel (0, 0) in detector coordinates.</summary>
        public double OriginV { get; set; }

        /// <summary>An empty panel of unit pitch; set the sizes (or use <see cref="Centered"/>).</summary>
        public Detector() { SpacingU = SpacingV = 1.0; }

        /// <summary>Square pixels, the panel centred on the principal point.</summary>
        public static Detector Centered(int columns, int rows, double pixelSpacing)
        {
            return new Detector {
                Columns = columns, Rows = rows,
                SpacingU = pixelSpacing, SpacingV = pixelSpacing,
                OriginU = -0.5 * (columns - 1) * pixelSpacing,
                OriginV = -0.5 * (rows - 1) * pixelSpacing,
            };
        }

        /// <summary>Floats in one projection (Columns * Rows).</summary>
        public int PixelCount { get { return checked(Columns * Rows); } }

        internal unsafe void ToNative(ref FdkDetectorNative n)
        {
            fixed (FdkDetectorNative* p = &n)
            {
                p->size[0] = Columns; p->size[1] = Rows;
                p->spacing[0] = SpacingU; p->spacing[1] = SpacingV;
                p->origin[0] = OriginU; p->origin[1] = OriginV;
            }
        }
    }

    /// <summary>One view in RTK's circular parameters (fdk_view).</summary>
    public sealed class ViewGeometry
    {
        /// <summary>Rotation about the y axis, in degrees (RTK's gantry angle).</summary>
        public double GantryAngleDeg { get; set; }
        /// <summary>Source to isocentre distance, &gt; 0.</summary>
        public double Sid { get; set; }
        /// <summary>Source to detector distance, &gt; 0.</summary>
        public double Sdd { get; set; }
        /// <summary>Source offset along the detector's u direction (RTK).</summary>
        public double SourceOffsetX { get; set; }
        /// <summary>Source offset along the detector's v direction (RTK).</summary>
        public double SourceOffsetY { get; set; }
        /// <summary>Detector offset along u (RTK's projection offset).</summary>
        public double ProjectionOffsetX { get; set; }
        /// <summary>Detector offset along v (RTK's projection offset).</summary>
        public double ProjectionOffsetY { get; set; }
        /// <summary>Detector rotation in its own plane, in degrees (RTK).</summary>
        public double InPlaneAngleDeg { get; set; }
        /// <summary>Tilt of the rotation plane, in degrees (RTK).</summary>
        public double OutOfPlaneAngleDeg { get; set; }

        /// <summary>A view with every parameter 0: set at least Sid and Sdd.</summary>
        public ViewGeometry() { }

        /// <summary>An untilted view without offsets at <paramref name="gantryAngleDeg"/>, with the source <paramref name="sid"/> from the isocentre and <paramref name="sdd"/> from the detector.</summary>
        public ViewGeometry(double gantryAngleDeg, double sid, double sdd)
        {
            GantryAngleDeg = gantryAngleDeg;
            Sid = sid;
            Sdd = sdd;
        }

        /// <summary>A copy (the geometry is mutable).</summary>
        public ViewGeometry Clone() { return (ViewGeometry)MemberwiseClone(); }

        /// <summary>
        /// This view's 3x4 projection matrix in RTK's form (row-major, 12
        /// doubles), as RTK's GetMatrices() gives it: K [R | 0] plus the
        /// translation, with R = Rz(-in) Rx(-out) Ry(-gantry) and
        /// K = [[-SDD, 0, a], [0, -SDD, b], [0, 0, 1]], a = sox - pox,
        /// b = soy - poy. Usable in <see cref="Scan.FromMatrices"/>.
        /// </summary>
        public double[] ToProjectionMatrix()
        {
            const double d2r = Math.PI / 180.0;
            double g = -GantryAngleDeg * d2r, o = -OutOfPlaneAngleDeg * d2r, i = -InPlaneAngleDeg * d2r;
            double cg = Math.Cos(g), sg = Math.Sin(g);
            double co = Math.Cos(o), so = Math.Sin(o);
            double ci = Math.Cos(i), si = Math.Sin(i);
            double[] ry = { cg, 0, sg, 0, 1, 0, -sg, 0, cg };
            double[] rx = { 1, 0, 0, 0, co, -so, 0, so, co };
            double[] rz = { ci, -si, 0, si, ci, 0, 0, 0, 1 };
            double[] rot = Multiply3(rz, Multiply3(rx, ry));
            double a = SourceOffsetX - ProjectionOffsetX, b = SourceOffsetY - ProjectionOffsetY;
            double[] k = { -Sdd, 0, a, 0, -Sdd, b, 0, 0, 1 };
            double[] kr = Multiply3(k, rot);
            double[] t = { Sdd * SourceOffsetX - a * Sid, Sdd * SourceOffsetY - b * Sid, -Sid };
            var m = new double[12];
            for (int r = 0; r < 3; ++r)
            {
                for (int c = 0; c < 3; ++c) m[r * 4 + c] = kr[r * 3 + c];
                m[r * 4 + 3] = t[r];
            }
            return m;
        }

        private static double[] Multiply3(double[] a, double[] b)
        {
            var c = new double[9];
            for (int r = 0; r < 3; ++r)
                for (int k = 0; k < 3; ++k)
                    for (int col = 0; col < 3; ++col) c[r * 3 + col] += a[r * 3 + k] * b[k * 3 + col];
            return c;
        }

        internal static ViewGeometry FromNative(FdkViewNative n)
        {
            return new ViewGeometry {
                GantryAngleDeg = n.gantry_angle_deg,
                Sid = n.sid,
                Sdd = n.sdd,
                SourceOffsetX = n.source_offset_x,
                SourceOffsetY = n.source_offset_y,
                ProjectionOffsetX = n.projection_offset_x,
                ProjectionOffsetY = n.projection_offset_y,
                InPlaneAngleDeg = n.in_plane_angle_deg,
                OutOfPlaneAngleDeg = n.out_of_plane_angle_deg,
            };
        }

        internal FdkViewNative ToNative()
        {
            return new FdkViewNative {
                gantry_angle_deg = GantryAngleDeg,
                sid = Sid,
                sdd = Sdd,
                source_offset_x = SourceOffsetX,
                source_offset_y = SourceOffsetY,
                projection_offset_x = ProjectionOffsetX,
                projection_offset_y = ProjectionOffsetY,
                in_plane_angle_deg = InPlaneAngleDeg,
                out_of_plane_angle_deg = OutOfPlaneAngleDeg,
            };
        }
    }

    /// <summary>
    /// The announced scan (fdk_scan): uniform angles, one geometry per view,
    /// or one projection matrix per view. Fewer views than announced may
    /// arrive; the angular weights follow the views that did.
    /// </summary>
    public abstract class Scan
    {
        internal Scan() { }

        /// <summary>Views announced: the projection indices are [0, ViewCount).</summary>
        public abstract int ViewCount { get; }

        /// <summary>
        /// <paramref name="viewCount"/> views at first + i * arc / viewCount
        /// degrees, sharing SID, SDD (and the offsets and tilts of
        /// <see cref="UniformScan.Geometry"/>, which can be set afterwards).
        /// </summary>
        public static UniformScan Uniform(int viewCount, double sid, double sdd,
                                          double firstAngleDeg = 0.0, double arcDeg = 360.0)
        {
            return new UniformScan(viewCount, new ViewGeometry(0.0, sid, sdd), firstAngleDeg, arcDeg);
        }

        /// <summary>One measured geometry per view (copied).</summary>
        public static PerViewScan FromViews(ViewGeometry[] views)
        {
            return new PerViewScan(views);
        }

        /// <summary>
        /// One 3x4 projection matrix per view, 12 doubles each, row-major, in
        /// RTK's form (see <see cref="ViewGeometry.ToProjectionMatrix"/>).
        /// </summary>
        public static MatrixScan FromMatrices(double[] matrices)
        {
            return new MatrixScan(matrices);
        }

        /// <summary>Fills <paramref name="n"/> (views/matrices left null: see Pin).</summary>
        internal abstract void ToNative(ref FdkScanNative n);
        /// <summary>The array the native struct must point to while fdk_create runs.</summary>
        internal abstract Array ArrayToPin();
    }

    /// <summary>Views at uniform angles sharing one geometry (FDK_SCAN_UNIFORM); see <see cref="Scan.Uniform"/>.</summary>
    public sealed class UniformScan : Scan
    {
        private int _viewCount;

        /// <summary><paramref name="viewCount"/> views at <paramref name="firstAngleDeg"/> + i * <paramref name="arcDeg"/> / <paramref name="viewCount"/> degrees, each with <paramref name="geometry"/> (kept, not copied) at that angle.</summary>
        public UniformScan(int viewCount, ViewGeometry geometry, double firstAngleDeg, double arcDeg)
        {
            if (geometry == null) throw new ArgumentNullException("geometry");
            _viewCount = viewCount;
            Geometry = geometry;
            FirstAngleDeg = firstAngleDeg;
            ArcDeg = arcDeg;
        }

        /// <summary>Views announced.</summary>
        public override int ViewCount { get { return _viewCount; } }
        /// <summary>Gantry angle of view 0, in degrees.</summary>
        public double FirstAngleDeg { get; set; }
        /// <summary>Signed; 360 for a full scan; the step is ArcDeg / ViewCount.</summary>
        public double ArcDeg { get; set; }
        /// <summary>SID, SDD, offsets and tilts of every view (its GantryAngleDeg is ignored).</summary>
        public ViewGeometry Geometry { get; private set; }

        /// <summary>The gantry angle of view <paramref name="index"/>, as fdk computes it.</summary>
        public double AngleOf(int index) { return FirstAngleDeg + index * ArcDeg / _viewCount; }

        internal override void ToNative(ref FdkScanNative n)
        {
            n.kind = (int)ScanKind.Uniform;
            n.num_views = _viewCount;
            n.first_angle_deg = FirstAngleDeg;
            n.arc_deg = ArcDeg;
            n.uniform = Geometry.ToNative();
        }

        internal override Array ArrayToPin() { return null; }
    }

    /// <summary>One measured geometry per view (FDK_SCAN_VIEWS); see <see cref="Scan.FromViews"/>.</summary>
    public sealed class PerViewScan : Scan
    {
        private readonly FdkViewNative[] _views;

        internal PerViewScan(ViewGeometry[] views)
        {
            if (views == null) throw new ArgumentNullException("views");
            _views = new FdkViewNative[views.Length];
            for (int i = 0; i < views.Length; ++i)
            {
                if (views[i] == null) throw new ArgumentException("views[" + i + "] is null", "views");
                _views[i] = views[i].ToNative();
            }
        }

        /// <summary>Views announced (one per geometry given).</summary>
        public override int ViewCount { get { return _views.Length; } }

        /// <summary>The geometry of view <paramref name="index"/> (a copy).</summary>
        public ViewGeometry ViewOf(int index) { return ViewGeometry.FromNative(_views[index]); }

        internal override void ToNative(ref FdkScanNative n)
        {
            n.kind = (int)ScanKind.Views;
            n.num_views = _views.Length;
        }

        internal override Array ArrayToPin() { return _views; }
    }

    /// <summary>One 3x4 projection matrix per view (FDK_SCAN_MATRICES); see <see cref="Scan.FromMatrices"/>.</summary>
    public sealed class MatrixScan : Scan
    {
        private readonly double[] _matrices;

        internal MatrixScan(double[] matrices)
        {
            if (matrices == null) throw new ArgumentNullException("matrices");
            if (matrices.Length % 12 != 0)
                throw new ArgumentException("12 doubles per view expected", "matrices");
            _matrices = (double[])matrices.Clone();
        }

        /// <summary>Views announced (one per 12 doubles given).</summary>
        public override int ViewCount { get { return _matrices.Length / 12; } }

        internal override void ToNative(ref FdkScanNative n)
        {
            n.kind = (int)ScanKind.Matrices;
            n.num_views = _matrices.Length / 12;
        }

        internal override Array ArrayToPin() { return _matrices; }
    }

    /// <summary>Ramp filter and redundancy weighting options.</summary>
    public sealed class FilterOptions
    {
        /// <summary>Apodisation of the ramp filter; RamLak by default.</summary>
        public FilterWindow Window { get; set; }
        /// <summary>Fraction of Nyquist in (0, 1].</summary>
        public double Cutoff { get; set; }
        /// <summary>Parker weights; Auto = when the views cover less than a full turn.</summary>
        public Activation ShortScan { get; set; }
        /// <summary>Half-fan weights, centred on the ray through the rotation axis; Auto = rtkfdk's
        /// rule: when the rays through the detector's edges pass at distances from the axis
        /// that differ by 10 % of their mean or more (see PlanInfo.HalfFanInferior).</summary>
        public Activation OffsetDetector { get; set; }
        /// <summary>Row extension on each side, as a fraction of the width, in [0, 1].</summary>
        public double TruncationPadding { get; set; }
        /// <summary>rtkfdk's --hannY: a Hann window along the detector's v axis, cut at this
        /// fraction of Nyquist, in [0, 1]; 0 (the default) = off.</summary>
        public double HannCutoffV { get; set; }

        /// <summary>fdk_config_init's defaults: RamLak, cutoff 1, weightings Auto, no padding.</summary>
        public FilterOptions()
        {
            Window = FilterWindow.RamLak;
            Cutoff = 1.0;
            ShortScan = Activation.Auto;
            OffsetDetector = Activation.Auto;
        }
    }

    /// <summary>Everything fdk_create needs (fdk_config).</summary>
    public sealed class ReconstructionSettings
    {
        /// <summary>The voxel grid to reconstruct (required).</summary>
        public Volume Volume { get; set; }
        /// <summary>The detector the projections come from (required).</summary>
        public Detector Detector { get; set; }
        /// <summary>The views announced (required).</summary>
        public Scan Scan { get; set; }
        /// <summary>Ramp filter and weightings; null means the defaults.</summary>
        public FilterOptions Filter { get; set; }

        /// <summary>CPU, CUDA, or Auto (the default: CUDA when usable).</summary>
        public Backend Backend { get; set; }
        /// <summary>CUDA ordinals to use; null or empty = every usable GPU. At most 16.</summary>
        public int[] Devices { get; set; }
        /// <summary>Bytes for the compressed store, slab cache and work buffers; 0 = half the RAM.</summary>
        public long HostMemoryBudget { get; set; }
        /// <summary>Bytes per GPU; 0 = 90 % of its free memory.</summary>
        public long GpuMemoryBudget { get; set; }
        /// <summary>How the filtered projections are stored: Float32 (the default, exact) or Float16.</summary>
        public Precision Precision { get; set; }
        /// <summary>CPU threads; 0 = hardware concurrency.</summary>
        public int Threads { get; set; }
        /// <summary>Y planes per slab; 0 = chosen from the budgets.</summary>
        public int SlabThickness { get; set; }
        /// <summary>Voxels outside the field of view: backprojected as rtkfdk (default) or zero.</summary>
        public OutsideFieldOfView OutsideFieldOfView { get; set; }
        /// <summary>
        /// When the compressed projections would outgrow the host budget:
        /// store the remaining views as float16 (ReducePrecision, the default;
        /// StoreInfo.ViewsReduced counts them) or refuse them with Status
        /// Budget (Strict). PlanInfo.StoreFit says at construction whether
        /// the announced scan fits.
        /// </summary>
        public StorePolicy StorePolicy { get; set; }
        /// <summary>
        /// Keep, as projections are pushed, what
        /// <see cref="Reconstructor.GetGeometryEstimate"/> needs (a few
        /// detector rows of each view, counted in the host budget); false
        /// (the default) = off. The volume stays the nominal geometry's.
        /// </summary>
        public bool EstimateGeometry { get; set; }
        /// <summary>
        /// Reconstruct a coarse preview volume alongside, view by view as the
        /// projections are filtered, to be read at any moment during the scan
        /// and after Finish (<see cref="Reconstructor.ReadPreview()"/>,
        /// <see cref="Reconstructor.ReadPreviewSlices"/>,
        /// <see cref="Reconstructor.PreviewUpdated"/>); false (the default) =
        /// off. On the GPU that filters the views with the CUDA backend, else on
        /// the CPU threads (its memory counted in the host budget).
        /// </summary>
        public bool Preview { get; set; }
        /// <summary>
        /// The preview's grid; null (the default) = the volume's field (the same
        /// extent and centre) at 1/f of its voxels along each axis, f &gt;= 2 the
        /// smallest factor that leaves every axis at most 128 voxels (1024^3 and
        /// 256^3 give 128^3). Checked as <see cref="Volume"/> is. Only used with
        /// <see cref="Preview"/>.
        /// </summary>
        public Volume PreviewVolume { get; set; }

        /// <summary>fdk_config_init's defaults; Volume, Detector and Scan must still be set.</summary>
        public ReconstructionSettings()
        {
            Filter = new FilterOptions();
        }
    }
}
