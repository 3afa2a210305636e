// A small sphere phantom through the binding: identical floats to the same
// input through the C ABI from C, the phantom's densities where they should
// be, and the three scan kinds agreeing.
using System;
using System.IO;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class ReconstructionTests
    {
        private float[] _volume;   // uniform scan through the binding
        private PlanInfo _plan;

        [TestFixtureSetUp]
        public void ReconstructOnce()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                _plan = r.GetPlanInfo();
                TestScan.PushAll(r);
                r.Finish();
                _volume = r.ReadVolume();
            }
        }

        [Test]
        public void SlabsReadIntoAHostBufferAreTheSameFloats()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            using (var buffer = new HostBuffer((long)_volume.Length * sizeof(float)))
            {
                TestScan.PushAll(r);
                r.Finish();
                long at = 0;
                for (int s = 0; s < r.SlabCount; ++s)
                {
                    r.ReadSlab(s, buffer, at * sizeof(float));
                    at += r.GetSlabInfo(s).FloatCount;
                }
                Assert.AreEqual(_volume.Length, at);
                var copy = new float[_volume.Length];
                buffer.CopyTo(0, copy, 0, copy.Length);
                CollectionAssert.AreEqual(_volume, copy);
                Assert.AreNotEqual(IntPtr.Zero, buffer.Pointer);
                buffer.Dispose();
                buffer.Dispose();  // once is enough; twice is harmless
                Assert.Throws<ObjectDisposedException>(() => { IntPtr p = buffer.Pointer; });
            }
            Assert.Throws<ArgumentOutOfRangeException>(() => new HostBuffer(0));
        }

        [Test]
        public void PlanFollowsTheSettings()
        {
            Assert.AreEqual(Backend.Cpu, _plan.Backend);
            Assert.AreEqual(TestScan.SlabThickness, _plan.SlabThickness);
            Assert.AreEqual(TestScan.N / TestScan.SlabThickness, _plan.SlabCount);
            Assert.AreEqual(TestScan.Threads, _plan.Threads);
            Assert.IsFalse(_plan.ShortScan);
            Assert.IsFalse(_plan.OffsetDetector);
        }

        [Test]
        public void OutsideTheFieldOfViewIsBackprojectedByDefaultOrZero()
        {
            // A 24 mm cube: its corners (16.9 mm from the axis) lie beyond the
            // 11.9 mm circle the detector's width sweeps.
            const int n = 48;
            var results = new float[2][];
            var plans = new PlanInfo[2];
            var modes = new[] { OutsideFieldOfView.Backproject, OutsideFieldOfView.Zero };
            for (int m = 0; m < 2; ++m)
            {
                ReconstructionSettings settings = TestScan.Settings();
                settings.Volume = Volume.Centered(n, n, n, TestScan.Spacing);
                settings.SlabThickness = 0;
                if (m == 1) settings.OutsideFieldOfView = OutsideFieldOfView.Zero;
                using (var r = new Reconstructor(settings))
                {
                    plans[m] = r.GetPlanInfo();
                    TestScan.PushAll(r);
                    r.Finish();
                    results[m] = r.ReadVolume();
                }
            }
            Assert.AreEqual(OutsideFieldOfView.Backproject, new ReconstructionSettings().OutsideFieldOfView);
            for (int m = 0; m < 2; ++m)
            {
                Assert.AreEqual(modes[m], plans[m].OutsideFieldOfView);
                Assert.Greater(plans[m].VoxelsOutsideFieldOfView, 0L);
                Assert.Less(plans[m].VoxelsOutsideFieldOfView, (long)n * n * n / 2);
            }
            double c = 0.5 * (n - 1) * TestScan.Spacing;  // the corner column, mid-height
            Assert.AreNotEqual(0.0f, TestScan.At(results[0], c, 0, c, n));
            Assert.AreEqual(0.0f, TestScan.At(results[1], c, 0, c, n));
            Assert.AreEqual(TestScan.At(results[0], 0, 0, 0, n), TestScan.At(results[1], 0, 0, 0, n));
        }

        [Test]
        public void SameFloatsAsTheCApiFromC()
        {
            string dir = Path.Combine(Path.GetTempPath(), "fdk-cs-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                string input = Path.Combine(dir, "projections.raw");
                string output = Path.Combine(dir, "volume.raw");
                float[] projections = TestScan.Projections();
                using (var w = new BinaryWriter(File.Create(input)))
                    foreach (float f in projections) w.Write(f);
                Assert.IsTrue(BitConverter.IsLittleEndian, "raw files are written little-endian");

                NativeTools.Run("fdk_reference", TestScan.N, TestScan.N, TestScan.N, TestScan.Spacing,
                                TestScan.Columns, TestScan.Rows, TestScan.Pixel, TestScan.Sid,
                                TestScan.Sdd, TestScan.Views, 0.0, 360.0, TestScan.Threads,
                                TestScan.SlabThickness, input, output);

                byte[] bytes = File.ReadAllBytes(output);
                Assert.AreEqual(_volume.Length * 4, bytes.Length);
                int different = 0, first = -1;
                for (int i = 0; i < _volume.Length; ++i)
                {
                    // Bit patterns, not values: identical floats, NaNs included.
                    int fromC = BitConverter.ToInt32(bytes, 4 * i);
                    int fromCs = BitConverter.ToInt32(BitConverter.GetBytes(_volume[i]), 0);
                    if (fromC != fromCs)
                    {
                        if (first < 0) first = i;
                        ++different;
                    }
                }
                Assert.AreEqual(0, different, "voxels differing from the C result; first at " + first);
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        [Test]
        public void DensitiesOfThePhantom()
        {
            // Centre of the large sphere, centre of the small one, and the
            // small one's mirror images (which would light up if the binding
            // mixed up axes or signs): 3 % and 15 % of the densities.
            float big = TestScan.At(_volume, 0, 0, 0);
            float small = TestScan.At(_volume, TestScan.SmallX, TestScan.SmallY, TestScan.SmallZ);
            Assert.AreEqual(TestScan.BigMu, big, 0.03 * TestScan.BigMu, "large sphere");
            Assert.AreEqual(TestScan.BigMu + TestScan.SmallMu, small, 0.15 * TestScan.SmallMu, "small sphere");
            double[][] mirrors = {
                new[] { -TestScan.SmallX, TestScan.SmallY, TestScan.SmallZ },
                new[] { TestScan.SmallX, -TestScan.SmallY, TestScan.SmallZ },
                new[] { TestScan.SmallX, TestScan.SmallY, -TestScan.SmallZ },
                new[] { TestScan.SmallZ, TestScan.SmallY, TestScan.SmallX },
            };
            foreach (double[] m in mirrors)
                Assert.AreEqual(TestScan.BigMu, TestScan.At(_volume, m[0], m[1], m[2]),
                                0.15 * TestScan.SmallMu, "mirror at " + string.Join(", ", m));
            // Outside the large sphere: air.
            Assert.AreEqual(0.0, TestScan.At(_volume, 0, 7.0, 0), 0.1 * TestScan.BigMu, "air");
        }

        private static float MaxDifference(float[] a, float[] b)
        {
            Assert.AreEqual(a.Length, b.Length);
            float worst = 0;
            for (int i = 0; i < a.Length; ++i) worst = Math.Max(worst, Math.Abs(a[i] - b[i]));
            return worst;
        }

        private static ViewGeometry[] ViewsOfTheUniformScan()
        {
            UniformScan uniform = Scan.Uniform(TestScan.Views, TestScan.Sid, TestScan.Sdd);
            var views = new ViewGeometry[TestScan.Views];
            for (int v = 0; v < views.Length; ++v)
                views[v] = new ViewGeometry(uniform.AngleOf(v), TestScan.Sid, TestScan.Sdd);
            return views;
        }

        private static float[] Reconstruct(Scan scan)
        {
            using (var r = new Reconstructor(TestScan.Settings(scan)))
            {
                TestScan.PushAll(r);
                r.Finish();
                return r.ReadVolume();
            }
        }

        [Test]
        public void PerViewScanAgreesWithUniform()
        {
            float[] perView = Reconstruct(Scan.FromViews(ViewsOfTheUniformScan()));
            Assert.Less(MaxDifference(_volume, perView), 1e-5 * TestScan.BigMu);
        }

        [Test]
        public void MatrixScanAgreesWithUniform()
        {
            ViewGeometry[] views = ViewsOfTheUniformScan();
            var matrices = new double[12 * views.Length];
            for (int v = 0; v < views.Length; ++v)
                Array.Copy(views[v].ToProjectionMatrix(), 0, matrices, 12 * v, 12);
            float[] fromMatrices = Reconstruct(Scan.FromMatrices(matrices));
            Assert.Less(MaxDifference(_volume, fromMatrices), 1e-4 * TestScan.BigMu);
        }

        [Test]
        public void MeasuredGeometryPerPushReplacesTheConfiguredOne()
        {
            // Configure a wrong SID, then push every view with its true geometry.
            ViewGeometry[] views = ViewsOfTheUniformScan();
            float[] all = TestScan.Projections();
            int n = TestScan.Columns * TestScan.Rows;
            using (var r = new Reconstructor(TestScan.Settings(Scan.Uniform(TestScan.Views, 80.0, TestScan.Sdd))))
            {
                for (int v = 0; v < views.Length; ++v) r.PushProjection(v, all, v * n, views[v]);
                r.Finish();
                Assert.Less(MaxDifference(_volume, r.ReadVolume()), 1e-5 * TestScan.BigMu);
            }
        }

        [Test]
        public void SlabsIntoOffsetsOfOneArrayAndIntoNewArrays()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                r.Finish();
                int count = r.SlabCount;
                Assert.AreEqual(TestScan.N / TestScan.SlabThickness, count);
                // Backwards, into one array at each slab's offset (plus a margin
                // before it that must stay untouched).
                const int margin = 5;
                var volume = new float[margin + _volume.Length];
                for (int s = count - 1; s >= 0; --s)
                {
                    SlabInfo info = r.GetSlabInfo(s);
                    Assert.AreEqual(s * TestScan.SlabThickness, info.YBegin);
                    Assert.AreEqual(info.Planes * TestScan.N * TestScan.N * 4L, info.ByteSize);
                    r.ReadSlab(s, volume, margin + (int)(info.YBegin * (long)TestScan.N * TestScan.N));
                    float[] alone = r.ReadSlab(s);
                    Assert.AreEqual(info.FloatCount, alone.Length);
                    for (int i = 0; i < alone.Length; ++i)
                        Assert.AreEqual(_volume[info.YBegin * TestScan.N * TestScan.N + i], alone[i]);
                }
                for (int i = 0; i < margin; ++i) Assert.AreEqual(0f, volume[i]);
                for (int i = 0; i < _volume.Length; ++i) Assert.AreEqual(_volume[i], volume[margin + i]);

                StoreInfo store = r.GetStoreInfo();
                Assert.AreEqual(TestScan.Views, store.ViewsStored);
                Timings timings = r.GetTimings();
                Assert.Greater(timings.FilterSeconds, 0.0);
                Assert.Greater(timings.BackprojectSeconds, 0.0);
                Assert.GreaterOrEqual(timings.DownloadSeconds, 0.0);
                Assert.AreEqual(0.0, store.RelativeErrorBound);
                Assert.Greater(store.RawBytes, 0);
            }
        }

        [Test]
        public void Float16StoreStaysWithinItsBound()
        {
            ReconstructionSettings settings = TestScan.Settings();
            settings.Precision = Precision.Float16;
            settings.Filter.Window = FilterWindow.Hann;
            settings.Filter.Cutoff = 0.8;
            using (var r = new Reconstructor(settings))
            {
                TestScan.PushAll(r);
                StoreInfo store = r.GetStoreInfo();
                Assert.Greater(store.RelativeErrorBound, 0.0);
                r.Finish();
                float[] v = r.ReadVolume();
                // Smoother window: the large sphere's centre is still its density.
                Assert.AreEqual(TestScan.BigMu, TestScan.At(v, 0, 0, 0), 0.05 * TestScan.BigMu);
            }
        }
    }
}
