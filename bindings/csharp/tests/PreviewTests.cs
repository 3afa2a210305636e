// The live preview through the binding (ReconstructionSettings.Preview): the
// grid, the reads against a direct reconstruction, the slices against the
// whole read, the PreviewUpdated event and its thread, and misuse.
using System;
using System.Collections.Generic;
using System.Threading;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class PreviewTests
    {
        private static readonly int Pixels = TestScan.Columns * TestScan.Rows;
        private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

        private static ReconstructionSettings WithPreview(Volume grid = null)
        {
            ReconstructionSettings s = TestScan.Settings();
            s.Preview = true;
            s.PreviewVolume = grid;
            return s;
        }

        // Not centred, not cubic, not the volume's spacing.
        private static Volume OddGrid()
        {
            return new Volume {
                SizeX = 20, SizeY = 14, SizeZ = 18,
                SpacingX = 0.8, SpacingY = 0.9, SpacingZ = 0.7,
                OriginX = -7.3, OriginY = -6.0, OriginZ = -5.8,
            };
        }

        private static void Push(Reconstructor r, int first, int end)
        {
            float[] all = TestScan.Projections();
            for (int v = first; v < end; ++v) r.PushProjection(v, all, v * Pixels);
        }

        [Test]
        public void SettingsReachTheConfig()
        {
            ReconstructionSettings s = TestScan.Settings();
            FdkConfigNative off = Reconstructor.BuildConfig(s);
            Assert.AreEqual(0, off.preview);
            s.Preview = true;
            s.PreviewVolume = OddGrid();
            FdkConfigNative on = Reconstructor.BuildConfig(s);
            Assert.AreEqual(1, on.preview);
            unsafe
            {
                Assert.AreEqual(20, on.preview_volume.size[0]);
                Assert.AreEqual(14, on.preview_volume.size[1]);
                Assert.AreEqual(18, on.preview_volume.size[2]);
                Assert.AreEqual(0.9, on.preview_volume.spacing[1]);
                Assert.AreEqual(-5.8, on.preview_volume.origin[2]);
            }
        }

        [Test]
        public void TheDefaultGridIsTheFieldAtHalfTheVoxels()
        {
            using (var r = new Reconstructor(WithPreview()))
            {
                PreviewInfo info = r.GetPreviewInfo();
                Assert.AreEqual(TestScan.N / 2, info.SizeX);
                Assert.AreEqual(TestScan.N / 2, info.SizeY);
                Assert.AreEqual(TestScan.N / 2, info.SizeZ);
                Assert.AreEqual((long)info.SizeX * info.SizeY * info.SizeZ, info.VoxelCount);
                Volume grid = info.Volume;
                Assert.AreEqual(2 * TestScan.Spacing, grid.SpacingX, 1e-12);
                // The same field: the same first edge.
                double edge = -0.5 * TestScan.N * TestScan.Spacing;
                Assert.AreEqual(edge, grid.OriginX - 0.5 * grid.SpacingX, 1e-9);
                Assert.AreEqual(0, info.Views);
                Assert.AreEqual(TestScan.Views, info.ViewsAnnounced);
                Assert.AreEqual(0.0, info.Coverage);
                Assert.IsFalse(info.OnGpu);
                Assert.IsFalse(info.IsComplete || info.HasFailed);
                Assert.Greater(info.MemoryBytes, 4L * info.VoxelCount - 1);
                StringAssert.Contains("16x16x16", info.ToString());
                // Nothing pushed yet: zeros.
                float[] empty = r.ReadPreview();
                Assert.AreEqual(info.VoxelCount, empty.Length);
                foreach (float v in empty) Assert.AreEqual(0.0f, v);
            }
        }

        [Test]
        public void AfterFinishEqualsAReconstructionOfItsGrid()
        {
            float[] preview;
            PreviewInfo info;
            using (var r = new Reconstructor(WithPreview(OddGrid())))
            {
                TestScan.PushAll(r);
                r.Finish();
                preview = r.ReadPreview(out info);
            }
            Assert.AreEqual(TestScan.Views, info.Views);
            Assert.AreEqual(1.0, info.Coverage);
            Assert.AreEqual(PreviewFlags.Complete, info.Flags);
            Assert.IsTrue(info.IsComplete);
            Assert.AreEqual(20 * 14 * 18, preview.Length);

            ReconstructionSettings direct = TestScan.Settings();
            direct.Volume = OddGrid();
            float[] expected;
            using (var r = new Reconstructor(direct))
            {
                TestScan.PushAll(r);
                r.Finish();
                expected = r.ReadVolume();
            }
            Assert.AreEqual(expected.Length, preview.Length);
            double diff = 0, scale = 0;
            for (int i = 0; i < expected.Length; ++i)
            {
                diff = Math.Max(diff, Math.Abs((double)preview[i] - expected[i]));
                scale = Math.Max(scale, Math.Abs((double)expected[i]));
            }
            Console.WriteLine("preview against a direct reconstruction of its grid: max |difference| / max = {0:G3}",
                              diff / scale);
            Assert.Greater(scale, 0.01, "the direct reconstruction is empty");
            Assert.Less(diff / scale, 1e-5, "max |preview - direct| / max |direct|");
        }

        [Test]
        public void SlicesAreThePlanesOfTheWholeRead()
        {
            using (var r = new Reconstructor(WithPreview(OddGrid())))
            {
                // Half the scan: a moment that is not the end.
                Push(r, 0, TestScan.Views / 2);
                r.Finish();
                const int nx = 20, ny = 14, nz = 18;
                var volume = new float[nx * ny * nz + 3];
                PreviewInfo info = r.ReadPreview(volume, 3);
                Assert.AreEqual(TestScan.Views / 2, info.Views);
                Func<int, int, int, float> at = (i, j, k) => volume[3 + (j * nz + k) * nx + i];

                PreviewSlices s = r.ReadPreviewSlices(3, -1, 11);
                Assert.AreEqual(3, s.X);
                Assert.AreEqual(ny / 2, s.Y);
                Assert.AreEqual(11, s.Z);
                Assert.AreEqual(info.Views, s.Info.Views);
                Assert.AreEqual(nz, s.XSlice.Width);
                Assert.AreEqual(ny, s.XSlice.Height);
                Assert.AreEqual(nx, s.YSlice.Width);
                Assert.AreEqual(nz, s.YSlice.Height);
                Assert.AreEqual(nx, s.ZSlice.Width);
                Assert.AreEqual(ny, s.ZSlice.Height);
                Assert.AreEqual(nz * ny, s.XSlice.Pixels.Length);
                Assert.AreEqual(nx * nz, s.YSlice.Pixels.Length);
                Assert.AreEqual(nx * ny, s.ZSlice.Pixels.Length);
                for (int j = 0; j < ny; ++j)
                    for (int k = 0; k < nz; ++k) Assert.AreEqual(at(3, j, k), s.XSlice[k, j]);
                for (int k = 0; k < nz; ++k)
                    for (int i = 0; i < nx; ++i) Assert.AreEqual(at(i, ny / 2, k), s.YSlice[i, k]);
                for (int j = 0; j < ny; ++j)
                    for (int i = 0; i < nx; ++i) Assert.AreEqual(at(i, j, 11), s.ZSlice.Pixels[j * nx + i]);

                PreviewSlices middle = r.ReadPreviewSlices();
                Assert.AreEqual(nx / 2, middle.X);
                Assert.AreEqual(ny / 2, middle.Y);
                Assert.AreEqual(nz / 2, middle.Z);
                Assert.AreEqual(at(nx / 2, ny / 2, nz / 2), middle.YSlice[nx / 2, nz / 2]);

                // The Span and array reads agree.
                var span = new float[nx * ny * nz];
                r.ReadPreview(new Span<float>(span));
                for (int i = 0; i < span.Length; ++i) Assert.AreEqual(volume[3 + i], span[i]);
                Assert.Throws<ArgumentOutOfRangeException>(() => GC.KeepAlive(s.XSlice[nz, 0]));
            }
        }

        [Test]
        public void TheEventFiresDuringTheScanAndOnceAfterFinish()
        {
            var events = new List<PreviewEventArgs>();
            var threads = new List<Thread>();
            bool background = true;
            var first = new ManualResetEvent(false);
            var final = new ManualResetEvent(false);
            using (var r = new Reconstructor(WithPreview()))
            {
                Assert.AreEqual(TimeSpan.FromSeconds(1), r.PreviewInterval);
                r.PreviewInterval = TimeSpan.FromMilliseconds(10);
                r.PreviewUpdated += (sender, e) =>
                {
                    Assert.AreSame(r, sender);
                    lock (events)
                    {
                        events.Add(e);
                        threads.Add(Thread.CurrentThread);
                        background &= Thread.CurrentThread.IsBackground;
                    }
                    first.Set();
                    if (e.IsFinal) final.Set();
                };
                int half = TestScan.Views / 2;
                Push(r, 0, half);
                Assert.IsTrue(first.WaitOne(Patience), "no PreviewUpdated during the scan");
                Push(r, half, TestScan.Views);
                r.Finish();
                Assert.IsTrue(final.WaitOne(Patience), "no PreviewUpdated after Finish");
                Thread.Sleep(50);
                lock (events)
                {
                    PreviewEventArgs during = events[0];
                    Assert.IsFalse(during.IsFinal);
                    Assert.IsNull(during.Error);
                    Assert.IsNotNull(during.Slices);
                    Assert.LessOrEqual(during.Info.Views, half);
                    Assert.IsFalse(during.Info.IsComplete);

                    PreviewEventArgs last = events[events.Count - 1];
                    Assert.IsTrue(last.IsFinal, "a raise after the final one");
                    Assert.IsNull(last.Error);
                    Assert.IsTrue(last.Info.IsComplete);
                    Assert.AreEqual(TestScan.Views, last.Info.Views);
                    Assert.AreEqual(1, events.FindAll(e => e.IsFinal).Count);
                    PreviewInfo grid = r.GetPreviewInfo();
                    Assert.AreEqual(grid.SizeX / 2, last.Slices.X);
                    Assert.AreEqual(grid.SizeX * grid.SizeZ, last.Slices.YSlice.Pixels.Length);
                    // One thread of its own, not this one.
                    foreach (Thread t in threads)
                    {
                        Assert.AreNotSame(Thread.CurrentThread, t);
                        Assert.AreSame(threads[0], t);
                    }
                    Assert.IsTrue(background, "the preview thread keeps the process alive");
                }
                Assert.IsNull(r.PreviewError);
                // The final slices are the finished preview's.
                PreviewSlices now = r.ReadPreviewSlices();
                PreviewSlices lastSlices = events[events.Count - 1].Slices;
                CollectionAssert.AreEqual(now.YSlice.Pixels, lastSlices.YSlice.Pixels);
            }
            Assert.IsFalse(threads[0].IsAlive, "the preview thread outlived the scan");
        }

        [Test]
        public void DisposeStopsAndJoinsTheThread()
        {
            Thread thread = null;
            int raised = 0;
            var started = new ManualResetEvent(false);
            var r = new Reconstructor(WithPreview());
            r.PreviewInterval = TimeSpan.FromMilliseconds(5);
            r.PreviewUpdated += (sender, e) =>
            {
                thread = Thread.CurrentThread;
                Interlocked.Increment(ref raised);
                started.Set();
                Thread.Sleep(30); // Dispose comes while a raise runs
            };
            Push(r, 0, 4);
            Assert.IsTrue(started.WaitOne(Patience));
            r.Dispose();
            Assert.IsFalse(thread.IsAlive, "Dispose returned before the preview thread ended");
            int after = Volatile.Read(ref raised);
            Thread.Sleep(50);
            Assert.AreEqual(after, Volatile.Read(ref raised));
            Assert.IsNull(r.PreviewError);
            r.Dispose(); // idempotent
            Assert.Throws<ObjectDisposedException>(() => { r.PreviewUpdated += (s, e) => { }; });
            Assert.Throws<ObjectDisposedException>(() => r.ReadPreview());
        }

        [Test]
        public void DisposeFromAHandlerDoesNotDeadlock()
        {
            var done = new ManualResetEvent(false);
            var r = new Reconstructor(WithPreview());
            r.PreviewInterval = TimeSpan.FromMilliseconds(5);
            r.PreviewUpdated += (sender, e) =>
            {
                r.Dispose();
                done.Set();
            };
            Assert.IsTrue(done.WaitOne(Patience));
            Assert.Throws<ObjectDisposedException>(() => r.GetPreviewInfo());
        }

        [Test]
        public void AHandlersExceptionStopsTheRaisingAndIsKept()
        {
            int raised = 0;
            var boom = new InvalidOperationException("boom");
            using (var r = new Reconstructor(WithPreview()))
            {
                r.PreviewInterval = TimeSpan.FromMilliseconds(5);
                r.PreviewUpdated += (sender, e) =>
                {
                    Interlocked.Increment(ref raised);
                    throw boom;
                };
                DateTime until = DateTime.UtcNow + Patience;
                while (r.PreviewError == null && DateTime.UtcNow < until) Thread.Sleep(5);
                Assert.AreSame(boom, r.PreviewError);
                Thread.Sleep(50);
                Assert.AreEqual(1, Volatile.Read(ref raised));
                // The reconstruction goes on.
                Push(r, 0, 2);
                Assert.LessOrEqual(r.ReadPreviewSlices().Info.Views, 2);
            }
        }

        [Test]
        public void PreviewReadsAreAllowedInAProgressHandler()
        {
            var seen = new List<int>();
            using (var r = new Reconstructor(WithPreview()))
            {
                r.Progress += (sender, e) =>
                {
                    seen.Add(r.GetPreviewInfo().ViewsAnnounced);
                    Assert.AreEqual(r.GetPreviewInfo().VoxelCount, r.ReadPreview().Length);
                    r.ReadPreviewSlices();
                };
                Push(r, 0, 3);
            }
            Assert.IsNotEmpty(seen);
            Assert.AreEqual(TestScan.Views, seen[0]);
        }

        [Test]
        public void WithoutThePreviewEveryReadIsInvalidState()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                var e = Assert.Throws<FdkException>(() => r.GetPreviewInfo());
                Assert.AreEqual(FdkStatus.InvalidState, e.Status);
                Assert.IsNotEmpty(e.NativeMessage);
                Assert.AreEqual(FdkStatus.InvalidState, Assert.Throws<FdkException>(() => r.ReadPreview()).Status);
                Assert.AreEqual(FdkStatus.InvalidState,
                                Assert.Throws<FdkException>(() => r.ReadPreview(new float[16])).Status);
                Assert.AreEqual(FdkStatus.InvalidState,
                                Assert.Throws<FdkException>(() => r.ReadPreviewSlices()).Status);
                Assert.AreEqual(FdkStatus.InvalidState,
                                Assert.Throws<FdkException>(() => { r.PreviewUpdated += (s, a) => { }; }).Status);
                Assert.IsNull(r.PreviewError);
                TestScan.PushAll(r, 2); // still usable
            }
        }

        [Test]
        public void BadIndicesAndBuffersAreRefused()
        {
            using (var r = new Reconstructor(WithPreview(OddGrid())))
            {
                Push(r, 0, 2);
                foreach (int[] at in new[] { new[] { 20, 0, 0 }, new[] { 0, 14, 0 }, new[] { 0, 0, 18 },
                                             new[] { -2, 0, 0 } })
                {
                    var e = Assert.Throws<FdkException>(() => r.ReadPreviewSlices(at[0], at[1], at[2]));
                    Assert.AreEqual(FdkStatus.OutOfRange, e.Status);
                    Assert.IsNotEmpty(e.NativeMessage);
                }
                var small = Assert.Throws<FdkException>(() => r.ReadPreview(new float[20 * 14 * 18 - 1]));
                Assert.AreEqual(FdkStatus.InvalidArgument, small.Status);
                Assert.Throws<ArgumentNullException>(() => r.ReadPreview((float[])null));
                Assert.Throws<ArgumentOutOfRangeException>(() => r.ReadPreview(new float[4], 5));
                Assert.Throws<ArgumentOutOfRangeException>(() => r.PreviewInterval = TimeSpan.Zero);
                Assert.AreEqual(19, r.ReadPreviewSlices(19, 13, 17).X); // the edges are in
            }
        }
    }
}
