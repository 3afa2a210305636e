// Geometry estimation through the binding: values and errors carried both
// ways, the estimator's lifetime, the Reconstructor's option, and Apply.
using System;
using System.Collections.Generic;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class GeometryEstimateTests
    {
        private static readonly int Pixels = TestScan.Columns * TestScan.Rows;

        private static IEnumerable<float[]> Views()
        {
            float[] all = TestScan.Projections();
            for (int v = 0; v < TestScan.Views; ++v)
            {
                var view = new float[Pixels];
                Array.Copy(all, v * Pixels, view, 0, Pixels);
                yield return view;
            }
        }

        private static void CheckPlausible(GeometryEstimate e)
        {
            Assert.IsNotNull(e);
            Assert.IsTrue(e.Confidence >= 0.0 && e.Confidence <= 1.0, e.ToString());
            Assert.IsFalse(double.IsNaN(e.OffsetUMm) || double.IsNaN(e.TiltDeg), e.ToString());
            Assert.IsTrue(e.ViewsUsed >= 0 && e.ViewsUsed <= TestScan.Views, e.ToString());
            Assert.IsTrue(e.RowsUsed >= 0 && e.RowsUsed <= TestScan.Rows, e.ToString());
            Assert.AreEqual(0, (int)e.Flags & ~0xF, e.ToString());
            Assert.IsNotEmpty(e.Basis);
            StringAssert.Contains(e.Basis, e.ToString());
        }

        [Test]
        public void EstimatesAWholeScan()
        {
            ReconstructionSettings s = TestScan.Settings();
            GeometryEstimate whole = GeometryEstimator.Estimate(s.Detector, s.Scan, Views());
            CheckPlausible(whole);
            // Any order, spans, and a view pushed again replacing the first.
            using (var estimator = new GeometryEstimator(s))
            {
                float[] all = TestScan.Projections();
                estimator.Push(0, new float[Pixels]);
                for (int v = TestScan.Views - 1; v >= 0; --v)
                    estimator.Push(v, new ReadOnlySpan<float>(all, v * Pixels, Pixels));
                GeometryEstimate again = estimator.Estimate();
                Assert.AreEqual(whole.ToString(), again.ToString());
                Assert.AreEqual(whole.OffsetUMm, again.OffsetUMm);
                Assert.AreEqual(whole.Flags, again.Flags);
            }
        }

        [Test]
        public void TooFewViewsIsAnEstimateNotAnError()
        {
            ReconstructionSettings s = TestScan.Settings();
            using (var estimator = new GeometryEstimator(s.Detector, s.Scan))
            {
                GeometryEstimate none = estimator.Estimate();
                Assert.AreEqual(0.0, none.Confidence);
                Assert.IsNotEmpty(none.Basis);
            }
        }

        [Test]
        public void ErrorsCarryTheEstimatorsMessage()
        {
            ReconstructionSettings s = TestScan.Settings();
            using (var estimator = new GeometryEstimator(s))
            {
                var pixels = new float[Pixels];
                var e = Assert.Throws<FdkException>(() => estimator.Push(TestScan.Views, pixels));
                Assert.AreEqual(FdkStatus.OutOfRange, e.Status);
                Assert.IsNotEmpty(e.NativeMessage);
                pixels[5] = float.NaN;
                e = Assert.Throws<FdkException>(() => estimator.Push(1, pixels));
                Assert.AreEqual(FdkStatus.InvalidArgument, e.Status);
                Assert.IsNotEmpty(e.NativeMessage);
                Assert.Throws<ArgumentOutOfRangeException>(() => estimator.Push(0, new float[Pixels - 1]));
                Assert.Throws<ArgumentException>(() => estimator.Push(0, new ReadOnlySpan<float>(new float[3])));
                estimator.Push(0, new float[Pixels]); // still usable
            }
        }

        [Test]
        public void AScanOfMatricesIsRefusedAtCreate()
        {
            var view = new ViewGeometry(0.0, TestScan.Sid, TestScan.Sdd);
            var m = new List<double>();
            for (int v = 0; v < 4; ++v) m.AddRange(view.ToProjectionMatrix());
            var e = Assert.Throws<FdkException>(() =>
                new GeometryEstimator(Detector.Centered(TestScan.Columns, TestScan.Rows, TestScan.Pixel),
                                      Scan.FromMatrices(m.ToArray())));
            Assert.AreEqual(FdkStatus.InvalidArgument, e.Status);
            Assert.IsNotEmpty(e.NativeMessage);
        }

        [Test]
        public void ADisposedEstimatorThrows()
        {
            var estimator = new GeometryEstimator(TestScan.Settings());
            estimator.Dispose();
            estimator.Dispose(); // idempotent
            Assert.Throws<ObjectDisposedException>(() => estimator.Push(0, new float[Pixels]));
            Assert.Throws<ObjectDisposedException>(() => estimator.Estimate());
        }

        [Test]
        public void AReconstructorEstimatesOnlyWhenAsked()
        {
            ReconstructionSettings s = TestScan.Settings();
            using (var r = new Reconstructor(s))
            {
                var e = Assert.Throws<FdkException>(() => r.GetGeometryEstimate());
                Assert.AreEqual(FdkStatus.InvalidState, e.Status);
                Assert.IsNotEmpty(e.NativeMessage);
            }
            s.EstimateGeometry = true;
            Assert.AreEqual(1, Reconstructor.BuildConfig(s).estimate_geometry);
            using (var r = new Reconstructor(s))
            {
                TestScan.PushAll(r);
                CheckPlausible(r.GetGeometryEstimate());
                r.Finish();
                CheckPlausible(r.GetGeometryEstimate());
            }
        }

        private static GeometryEstimate HandMade(double offsetMm, double tiltDeg)
        {
            var n = new FdkGeometryEstimateNative();
            unsafe { NativeMethods.fdk_geometry_estimate_init(&n); }
            n.offset_u_mm = offsetMm;
            n.offset_u_pixels = offsetMm / TestScan.Pixel;
            n.tilt_deg = tiltDeg;
            n.confidence = 0.9;
            n.flags = (uint)(GeometryEstimateFlags.Offset | GeometryEstimateFlags.Tilt);
            return new GeometryEstimate(n);
        }

        [Test]
        public void ApplyAddsToTheRightFields()
        {
            GeometryEstimate e = HandMade(0.75, 0.5);
            Assert.IsTrue(e.OffsetEstimated && e.TiltEstimated && !e.LowStructure && !e.FewPairs);
            var view = new ViewGeometry(30.0, TestScan.Sid, TestScan.Sdd) {
                ProjectionOffsetX = 1.0, InPlaneAngleDeg = 0.2, SourceOffsetX = 0.3,
            };
            ViewGeometry fixedView = e.Apply(view);
            Assert.AreEqual(1.75, fixedView.ProjectionOffsetX, 1e-12);
            Assert.AreEqual(0.7, fixedView.InPlaneAngleDeg, 1e-12);
            Assert.AreEqual(30.0, fixedView.GantryAngleDeg);
            Assert.AreEqual(0.3, fixedView.SourceOffsetX);
            Assert.AreEqual(0.0, fixedView.ProjectionOffsetY);
            Assert.AreEqual(1.0, view.ProjectionOffsetX); // the original is unchanged

            UniformScan uniform = Scan.Uniform(90, TestScan.Sid, TestScan.Sdd, 10.0, 200.0);
            var fixedUniform = e.Apply(uniform) as UniformScan;
            Assert.IsNotNull(fixedUniform, "a uniform scan stays uniform");
            Assert.AreEqual(90, fixedUniform.ViewCount);
            Assert.AreEqual(10.0, fixedUniform.FirstAngleDeg);
            Assert.AreEqual(200.0, fixedUniform.ArcDeg);
            Assert.AreEqual(0.75, fixedUniform.Geometry.ProjectionOffsetX, 1e-12);
            Assert.AreEqual(0.5, fixedUniform.Geometry.InPlaneAngleDeg, 1e-12);

            var views = new ViewGeometry[3];
            for (int i = 0; i < 3; ++i)
                views[i] = new ViewGeometry(i * 120.0, TestScan.Sid, TestScan.Sdd) { ProjectionOffsetX = i };
            var fixedViews = e.Apply(Scan.FromViews(views)) as PerViewScan;
            Assert.IsNotNull(fixedViews, "a per-view scan stays per-view");
            for (int i = 0; i < 3; ++i)
            {
                Assert.AreEqual(i + 0.75, fixedViews.ViewOf(i).ProjectionOffsetX, 1e-12);
                Assert.AreEqual(0.5, fixedViews.ViewOf(i).InPlaneAngleDeg, 1e-12);
                Assert.AreEqual(i * 120.0, fixedViews.ViewOf(i).GantryAngleDeg);
            }
            Assert.Throws<ArgumentException>(() => e.Apply(Scan.FromMatrices(new double[12])));
        }
    }
}
