// InspectionDemo: what an inspection application does with fdk, end to end.
//
//   1. configure the reconstruction from the scanner's geometry;
//   2. an acquisition thread pushes each projection as the (simulated)
//      scanner delivers it, while the UI thread shows progress;
//   3. after the last view, the volume is read slab by slab (never whole),
//      each slab inspected and optionally appended to a raw file;
//   4. the report: where the part has a void.
//
// The part is a sphere of aluminium-like attenuation with a spherical void
// and a dense inclusion; its projections are computed exactly. Ctrl+C
// cancels through a CancellationToken.
//
//   mono InspectionDemo.exe [--size N] [--views N] [--threads N]
//                           [--budget-mb N] [--slab N] [--out volume.raw]
//
// Exit status: 0 when the void is found where it is, 1 otherwise, 2 on bad
// arguments, 3 when cancelled or on an fdk error.
using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Threading;
using Fdk;
using Fdk.Samples;

internal static class InspectionDemo
{
    private const double PartRadius = 20.0;   // mm
    private const double PartMu = 0.05;       // mm^-1
    private const double VoidX = 6.0, VoidY = -4.0, VoidZ = 5.0, VoidRadius = 3.0;
    private const double InclusionX = -8.0, InclusionY = 3.0, InclusionZ = -6.0, InclusionRadius = 2.0;

    private static int Main(string[] args)
    {
        int size = 96, views = 240, threads = 0, slab = 0;
        long budgetMb = 0;
        string output = null;
        try
        {
            for (int i = 0; i < args.Length; ++i)
            {
                string value = i + 1 < args.Length ? args[i + 1] : null;
                switch (args[i])
                {
                    case "--size": size = int.Parse(value, CultureInfo.InvariantCulture); ++i; break;
                    case "--views": views = int.Parse(value, CultureInfo.InvariantCulture); ++i; break;
                    case "--threads": threads = int.Parse(value, CultureInfo.InvariantCulture); ++i; break;
                    case "--slab": slab = int.Parse(value, CultureInfo.InvariantCulture); ++i; break;
                    case "--budget-mb": budgetMb = long.Parse(value, CultureInfo.InvariantCulture); ++i; break;
                    case "--out": output = value; ++i; if (value == null) throw new FormatException(); break;
                    default: throw new FormatException(args[i]);
                }
            }
        }
        catch (Exception)
        {
            Console.Error.WriteLine("usage: InspectionDemo [--size N] [--views N] [--threads N] " +
                                    "[--budget-mb N] [--slab N] [--out volume.raw]");
            return 2;
        }

        Console.WriteLine("fdk {0} (binding for major version {1})", Reconstructor.NativeVersion,
                          Reconstructor.BindingVersionMajor);

        // ---- 1. configuration: the scanner's geometry ---------------------------------
        const double sid = 400.0, sdd = 600.0;             // magnification 1.5
        double voxel = 2.0 * (PartRadius + 4.0) / size;    // the part plus a margin
        int columns = (int)Math.Ceiling(size * 1.25), rows = columns;
        double pixel = voxel * 1.6;                        // a touch larger than the volume
        var settings = new ReconstructionSettings {
            Volume = Volume.Centered(size, size, size, voxel),
            Detector = Detector.Centered(columns, rows, pixel),
            Scan = Scan.Uniform(views, sid, sdd),
            Filter = new FilterOptions { Window = FilterWindow.Hann, Cutoff = 1.0 },
            Backend = Backend.Auto,                 // CUDA when there is one, else the CPU
            HostMemoryBudget = budgetMb * 1024 * 1024,
            Threads = threads,
            SlabThickness = slab,
        };
        var part = new SpherePhantom()
            .Add(0, 0, 0, PartRadius, PartMu)
            .Add(VoidX, VoidY, VoidZ, VoidRadius, -PartMu)
            .Add(InclusionX, InclusionY, InclusionZ, InclusionRadius, 2 * PartMu);

        using (var cancel = new CancellationTokenSource())
        {
            ConsoleCancelEventHandler onCtrlC = (s, e) => { e.Cancel = true; cancel.Cancel(); };
            Console.CancelKeyPress += onCtrlC;
            try
            {
                return Run(settings, part, cancel.Token, output);
            }
            catch (FdkException e)
            {
                Console.Error.WriteLine("fdk failed: {0} ({1})", e.NativeMessage, e.Status);
                return 3;
            }
            finally
            {
                Console.CancelKeyPress -= onCtrlC;
            }
        }
    }

    private static int Run(ReconstructionSettings settings, SpherePhantom part,
                           CancellationToken token, string output)
    {
        var clock = Stopwatch.StartNew();
        using (var recon = new Reconstructor(settings, token))
        {
            PlanInfo plan = recon.GetPlanInfo();
            Console.WriteLine("plan: {0} backend, {1} slabs of {2} planes, {3} threads, host budget {4} MiB",
                              plan.Backend, plan.SlabCount, plan.SlabThickness, plan.Threads,
                              plan.HostMemoryBudget >> 20);

            // Progress, on whichever thread is working: a line every 10 % of
            // the views and for every slab.
            int lastDecile = -1;
            recon.Progress += (sender, e) => {
                ReconstructionProgress p = e.Progress;
                if (p.Phase == Phase.Acquiring)
                {
                    int decile = 10 * p.ViewsPushed / p.ViewsTotal;
                    if (decile == lastDecile) return;
                    lastDecile = decile;
                }
                Console.WriteLine("  [{0,6:F2} s] {1}", clock.Elapsed.TotalSeconds, p);
            };

            // ---- 2. acquisition: the scanner thread pushes views as they come ---------------
            var scan = (UniformScan)settings.Scan;
            Detector detector = settings.Detector;
            Exception acquisitionError = null;
            var acquisition = new Thread(() => {
                try
                {
                    var frame = new float[detector.PixelCount];
                    for (int v = 0; v < scan.ViewCount; ++v)
                    {
                        part.Project(detector, scan.AngleOf(v), scan.Geometry.Sid, scan.Geometry.Sdd, frame, 0);
                        recon.PushProjection(v, frame);   // filtered and stored; frame reusable
                    }
                    recon.Finish();
                }
                catch (Exception e)
                {
                    acquisitionError = e;
                }
            });
            acquisition.Name = "acquisition";
            acquisition.Start();
            acquisition.Join();
            if (acquisitionError != null)
            {
                var fdkError = acquisitionError as FdkException;
                if (fdkError != null && fdkError.Status == FdkStatus.Cancelled)
                {
                    Console.Error.WriteLine("cancelled during acquisition");
                    return 3;
                }
                throw new InvalidOperationException("acquisition failed", acquisitionError);
            }
            StoreInfo store = recon.GetStoreInfo();
            Console.WriteLine("acquired {0} views in {1:F2} s; store {2:F1} MiB compressed {3:F2}:1",
                              store.ViewsStored, clock.Elapsed.TotalSeconds,
                              store.StoredBytes / 1048576.0, store.Ratio);

            // ---- 3. the volume, slab by slab -------------------------------------------------
            Volume vol = settings.Volume;
            var inspector = new VoidInspector(vol, PartMu, PartRadius);
            FileStream raw = output != null ? File.Create(output) : null;
            try
            {
                int slabs = recon.SlabCount;
                float[] buffer = null;
                for (int s = 0; s < slabs; ++s)
                {
                    SlabInfo info = recon.GetSlabInfo(s);
                    if (buffer == null || buffer.Length < info.FloatCount) buffer = new float[info.FloatCount];
                    recon.ReadSlab(s, buffer, 0);
                    inspector.Inspect(buffer, info);
                    if (raw != null)
                    {
                        var bytes = new byte[info.ByteSize];
                        Buffer.BlockCopy(buffer, 0, bytes, 0, bytes.Length);
                        raw.Write(bytes, 0, bytes.Length);
                    }
                }
            }
            finally
            {
                if (raw != null) raw.Dispose();
            }
            if (output != null)
                Console.WriteLine("volume written to {0} ({1} x {2} x {3} float32, x fastest, then z, then y)",
                                  output, vol.SizeX, vol.SizeZ, vol.SizeY);

            // ---- 4. the report ---------------------------------------------------------------
            Timings t = recon.GetTimings();
            Console.WriteLine("done in {0:F2} s (filter {1:F2} s, store {2:F2} s, backprojection {3:F2} s, " +
                              "upload {4:F2} s, download {5:F2} s)", clock.Elapsed.TotalSeconds,
                              t.FilterSeconds, t.StoreSeconds, t.BackprojectSeconds, t.UploadSeconds,
                              t.DownloadSeconds);
            return inspector.Report(VoidX, VoidY, VoidZ, VoidRadius) ? 0 : 1;
        }
    }

    /// <summary>
    /// Finds voxels well inside the part whose density is under half the
    /// material's: the void. Works slab by slab.
    /// </summary>
    private sealed class VoidInspector
    {
        private readonly Volume _v;
        private readonly double _mu, _inner;
        private long _count;
        private double _sx, _sy, _sz, _materialSum;
        private long _materialCount;

        public VoidInspector(Volume volume, double mu, double partRadius)
        {
            _v = volume;
            _mu = mu;
            _inner = partRadius - 2.0;   // stay clear of the surface blur
        }

        public void Inspect(float[] slab, SlabInfo info)
        {
            for (int y = info.YBegin; y < info.YEnd; ++y)
            {
                double py = _v.OriginY + y * _v.SpacingY;
                for (int z = 0; z < _v.SizeZ; ++z)
                {
                    double pz = _v.OriginZ + z * _v.SpacingZ;
                    long row = ((long)(y - info.YBegin) * _v.SizeZ + z) * _v.SizeX;
                    for (int x = 0; x < _v.SizeX; ++x)
                    {
                        double px = _v.OriginX + x * _v.SpacingX;
                        if (px * px + py * py + pz * pz > _inner * _inner) continue;
                        float value = slab[row + x];
                        if (value < 0.5 * _mu)
                        {
                            ++_count;
                            _sx += px; _sy += py; _sz += pz;
                        }
                        else if (value < 1.5 * _mu)
                        {
                            _materialSum += value;
                            ++_materialCount;
                        }
                    }
                }
            }
        }

        public bool Report(double x, double y, double z, double radius)
        {
            double voxelVolume = _v.SpacingX * _v.SpacingY * _v.SpacingZ;
            Console.WriteLine("material: mean {0:F4} /mm over {1} voxels (true {2:F4})",
                              _materialCount > 0 ? _materialSum / _materialCount : 0.0, _materialCount, _mu);
            if (_count == 0)
            {
                Console.WriteLine("RESULT: no void found");
                return false;
            }
            double cx = _sx / _count, cy = _sy / _count, cz = _sz / _count;
            double found = _count * voxelVolume;
            double truth = 4.0 / 3.0 * Math.PI * radius * radius * radius;
            double miss = Math.Sqrt((cx - x) * (cx - x) + (cy - y) * (cy - y) + (cz - z) * (cz - z));
            Console.WriteLine("void: {0} voxels, {1:F1} mm^3 (true {2:F1}), centre ({3:F2}, {4:F2}, {5:F2}) mm, " +
                              "{6:F2} mm from the true centre", _count, found, truth, cx, cy, cz, miss);
            bool ok = miss < 1.0 && found > 0.5 * truth && found < 1.5 * truth;
            Console.WriteLine(ok ? "RESULT: void found where it is" : "RESULT: void misplaced or missized");
            return ok;
        }
    }
}
