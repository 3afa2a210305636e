// Shared pieces of the binding's tests: the test scan, the phantom, and the
// native helper programs (tests/native/*.c, compiled by build.sh) found
// through FDK_TEST_NATIVE_DIR.
using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using Fdk.Samples;
using NUnit.Framework;

namespace Fdk.Tests
{
    internal static class TestScan
    {
        public const int N = 32;             // voxels per axis
        public const double Spacing = 0.5;   // mm
        public const int Columns = 72;
        public const int Rows = 64;
        public const double Pixel = 0.5;     // mm at the detector (magnification 1.5)
        public const double Sid = 100.0;
        public const double Sdd = 150.0;
        public const int Views = 90;
        public const int Threads = 2;
        public const int SlabThickness = 8;  // 4 slabs of 8 planes

        public const double BigMu = 0.02;
        public const double SmallMu = 0.03;
        // The small sphere sits off every symmetry plane, so that a mirrored
        // or transposed geometry would put it elsewhere.
        public const double SmallX = 2.5, SmallY = 2.0, SmallZ = -2.5, SmallRadius = 1.5;

        public static SpherePhantom Phantom()
        {
            return new SpherePhantom()
                .Add(0, 0, 0, 6.0, BigMu)
                .Add(SmallX, SmallY, SmallZ, SmallRadius, SmallMu);
        }

        public static ReconstructionSettings Settings(Scan scan = null)
        {
            return new ReconstructionSettings {
                Volume = Volume.Centered(N, N, N, Spacing),
                Detector = Detector.Centered(Columns, Rows, Pixel),
                Scan = scan ?? Scan.Uniform(Views, Sid, Sdd),
                Backend = Backend.Cpu,
                Threads = Threads,
                SlabThickness = SlabThickness,
            };
        }

        private static float[] s_projections;

        /// <summary>All views, view after view (cached: the phantom is fixed).</summary>
        public static float[] Projections()
        {
            if (s_projections != null) return s_projections;
            var detector = Detector.Centered(Columns, Rows, Pixel);
            var all = new float[Views * Columns * Rows];
            SpherePhantom phantom = Phantom();
            UniformScan scan = Scan.Uniform(Views, Sid, Sdd);
            for (int v = 0; v < Views; ++v)
                phantom.Project(detector, scan.AngleOf(v), Sid, Sdd, all, v * Columns * Rows);
            s_projections = all;
            return all;
        }

        public static void PushAll(Reconstructor r, int count = Views)
        {
            float[] all = Projections();
            for (int v = 0; v < count; ++v) r.PushProjection(v, all, v * Columns * Rows);
        }

        /// <summary>The voxel nearest to a physical point (x fastest, then z, then y).</summary>
        public static float At(float[] volume, double x, double y, double z, int n = N)
        {
            double origin = -0.5 * (n - 1) * Spacing;
            int i = (int)Math.Round((x - origin) / Spacing);
            int j = (int)Math.Round((y - origin) / Spacing);
            int k = (int)Math.Round((z - origin) / Spacing);
            return volume[((long)j * n + k) * n + i];
        }
    }

    internal static class NativeTools
    {
        public static string Path(string name)
        {
            string dir = Environment.GetEnvironmentVariable("FDK_TEST_NATIVE_DIR");
            if (string.IsNullOrEmpty(dir))
                Assert.Fail("FDK_TEST_NATIVE_DIR is not set: it names the folder of the compiled " +
                            "tests/native programs (bindings/csharp/build.sh sets it)");
            string path = System.IO.Path.Combine(dir, name);
            if (!File.Exists(path)) Assert.Fail(path + " does not exist");
            return path;
        }

        /// <summary>Runs a helper; fails the test on a non-zero exit; returns stdout.</summary>
        public static string Run(string name, params object[] args)
        {
            var arguments = new string[args.Length];
            for (int i = 0; i < args.Length; ++i)
            {
                string a = Convert.ToString(args[i], CultureInfo.InvariantCulture);
                arguments[i] = a.IndexOf(' ') >= 0 ? "\"" + a + "\"" : a;
            }
            var info = new ProcessStartInfo(Path(name), string.Join(" ", arguments)) {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using (Process p = Process.Start(info))
            {
                string stderr = null;
                var errThread = new System.Threading.Thread(() => stderr = p.StandardError.ReadToEnd());
                errThread.Start();
                string stdout = p.StandardOutput.ReadToEnd();
                p.WaitForExit();
                errThread.Join();
                Assert.AreEqual(0, p.ExitCode, name + " failed: " + stderr);
                return stdout;
            }
        }
    }
}
