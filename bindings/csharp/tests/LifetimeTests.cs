// Handle lifetime, progress callbacks under garbage collection, cancellation.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class LifetimeTests
    {
        private static readonly int Pixels = TestScan.Columns * TestScan.Rows;

        [Test]
        public void DoubleDisposeIsSafeAndUseAfterDisposeThrows()
        {
            long before = FdkContextHandle.ReleasedCount;
            var r = new Reconstructor(TestScan.Settings());
            r.PushProjection(0, new float[Pixels]);
            r.Dispose();
            r.Dispose();
            Assert.AreEqual(before + 1, FdkContextHandle.ReleasedCount, "destroyed exactly once");
            Assert.Throws<ObjectDisposedException>(() => r.PushProjection(1, new float[Pixels]));
            Assert.Throws<ObjectDisposedException>(() => r.Finish());
            Assert.Throws<ObjectDisposedException>(() => r.GetProgress());
            Assert.Throws<ObjectDisposedException>(() => r.Cancel());
            Assert.Throws<ObjectDisposedException>(() => { int unused = r.SlabCount; });
            Assert.Throws<ObjectDisposedException>(() => r.Progress += (s, e) => { });
        }

        // On a thread of its own, so that no stale stack slot (Mono scans
        // stacks conservatively) keeps the Reconstructor alive afterwards.
        private static void AbandonReconstructors(int count)
        {
            var t = new Thread(() => {
                for (int i = 0; i < count; ++i)
                {
                    var r = new Reconstructor(TestScan.Settings());
                    r.Progress += (s, e) => { };
                    TestScan.PushAll(r, 3);
                    // never disposed
                }
            });
            t.Start();
            t.Join();
        }

        [Test]
        public void FinalizerAloneReleasesTheNativeContext()
        {
            long before = FdkContextHandle.ReleasedCount;
            AbandonReconstructors(4);
            for (int round = 0; round < 20 && FdkContextHandle.ReleasedCount < before + 4; ++round)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                Thread.Sleep(10);
            }
            Assert.GreaterOrEqual(FdkContextHandle.ReleasedCount, before + 4,
                                  "fdk_destroy ran from the finalizer");
        }

        private static void Churn()
        {
            var garbage = new List<byte[]>();
            for (int i = 0; i < 64; ++i) garbage.Add(new byte[16 * 1024]);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
        }

        [Test]
        public void ProgressCallbackSurvivesGarbageCollection()
        {
            var events = new List<ReconstructionProgress>();
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                // The only reference to the native delegate is the handle's.
                r.Progress += (s, e) => {
                    events.Add(e.Progress);
                    Churn();                       // inside the callback
                };
                Churn();
                float[] all = TestScan.Projections();
                for (int v = 0; v < TestScan.Views; ++v)
                {
                    r.PushProjection(v, all, v * Pixels);
                    Churn();                       // between pushes
                }
                r.Finish();
                Churn();
                int slabs = r.SlabCount;
                for (int s = 0; s < slabs; ++s)
                {
                    r.ReadSlab(s);
                    Churn();
                }
                Assert.AreEqual(Phase.Done, r.GetProgress().Phase);
            }
            // An event per projection stored, then (the library may add one when
            // the phase changes at Finish) one per slab computed.
            int slabCount = TestScan.N / TestScan.SlabThickness;
            Assert.GreaterOrEqual(events.Count, TestScan.Views + slabCount);
            for (int v = 0; v < TestScan.Views; ++v)
            {
                Assert.AreEqual(Phase.Acquiring, events[v].Phase);
                Assert.AreEqual(v + 1, events[v].ViewsPushed);
                Assert.AreEqual(TestScan.Views, events[v].ViewsTotal);
            }
            int slabEvents = 0;
            for (int i = TestScan.Views; i < events.Count; ++i)
            {
                Assert.AreNotEqual(Phase.Acquiring, events[i].Phase);
                if (events[i].SlabsDone > events[i - 1].SlabsDone) ++slabEvents;
            }
            Assert.AreEqual(slabCount, slabEvents);
            Assert.AreEqual(Phase.Done, events[events.Count - 1].Phase);
            Assert.AreEqual(slabCount, events[events.Count - 1].SlabsDone);
            Assert.AreEqual(slabCount, events[events.Count - 1].SlabsTotal);
        }

        [Test]
        public void CancellationTokenCancelsTheReconstruction()
        {
            using (var cts = new CancellationTokenSource())
            using (var r = new Reconstructor(TestScan.Settings(), cts.Token))
            {
                TestScan.PushAll(r, 2);
                cts.Cancel();
                var e = Assert.Throws<FdkException>(() => r.PushProjection(2, new float[Pixels]));
                Assert.AreEqual(FdkStatus.Cancelled, e.Status);
                Assert.AreEqual(Phase.Cancelled, r.GetProgress().Phase);
                Assert.AreEqual(2, r.GetProgress().ViewsPushed);
                e = Assert.Throws<FdkException>(() => r.Finish());
                Assert.AreEqual(FdkStatus.Cancelled, e.Status);
            }
        }

        [Test]
        public void CancellationFromAProgressHandler()
        {
            using (var cts = new CancellationTokenSource())
            using (var r = new Reconstructor(TestScan.Settings(), cts.Token))
            {
                r.Progress += (s, e) => { if (e.Progress.ViewsPushed == 3) cts.Cancel(); };
                float[] all = TestScan.Projections();
                int pushed = 0;
                var ex = Assert.Throws<FdkException>(() => {
                    for (int v = 0; v < TestScan.Views; ++v, ++pushed) r.PushProjection(v, all, v * Pixels);
                });
                Assert.AreEqual(FdkStatus.Cancelled, ex.Status);
                Assert.LessOrEqual(pushed, 4);
                Assert.AreEqual(Phase.Cancelled, r.GetProgress().Phase);
            }
        }

        [Test]
        public void AlreadyCancelledTokenAndDisposeBeforeCancel()
        {
            using (var cts = new CancellationTokenSource())
            {
                cts.Cancel();
                using (var r = new Reconstructor(TestScan.Settings(), cts.Token))
                {
                    var e = Assert.Throws<FdkException>(() => r.PushProjection(0, new float[Pixels]));
                    Assert.AreEqual(FdkStatus.Cancelled, e.Status);
                }
            }
            using (var cts = new CancellationTokenSource())
            {
                var r = new Reconstructor(TestScan.Settings(), cts.Token);
                r.Dispose();
                cts.Cancel();  // the registration is gone with the handle: nothing happens
            }
        }

        [Test]
        public void HandlerExceptionIsRethrownAfterTheNativeCall()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                r.Progress += (s, e) => { if (e.Progress.ViewsPushed == 2) throw new ApplicationException("from handler"); };
                float[] all = TestScan.Projections();
                r.PushProjection(0, all, 0);
                var ex = Assert.Throws<ApplicationException>(() => r.PushProjection(1, all, Pixels));
                Assert.AreEqual("from handler", ex.Message);
                // That projection was stored nonetheless; the handle is fine.
                Assert.AreEqual(2, r.GetProgress().ViewsPushed);
                r.PushProjection(2, TestScan.Projections(), 2 * Pixels);
                Assert.AreEqual(3, r.GetProgress().ViewsPushed);
            }
        }

        [Test]
        public void HandlerMayOnlyQueryAndCancel()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                ReconstructionProgress seen = default(ReconstructionProgress);
                r.Progress += (s, e) => {
                    seen = ((Reconstructor)s).GetProgress();       // allowed
                    if (e.Progress.ViewsPushed == 1)
                        ((Reconstructor)s).PushProjection(5, new float[Pixels]);  // refused
                };
                Assert.Throws<InvalidOperationException>(() => TestScan.PushAll(r, 1));
                Assert.AreEqual(1, seen.ViewsPushed);
                Assert.AreEqual(1, r.GetProgress().ViewsPushed, "the re-entrant push did not happen");
            }
        }

        [Test]
        public void PushOnOneThreadWatchAndReadOnAnother()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                Exception failure = null;
                var pusher = new Thread(() => {
                    try { TestScan.PushAll(r); r.Finish(); }
                    catch (Exception e) { failure = e; }
                });
                pusher.Start();
                int last = 0;
                while (pusher.IsAlive)
                {
                    int now = r.GetProgress().ViewsPushed;
                    Assert.GreaterOrEqual(now, last, "progress never goes back");
                    last = now;
                    Thread.Sleep(1);
                }
                pusher.Join();
                Assert.IsNull(failure, failure == null ? "" : failure.ToString());
                Assert.AreEqual(TestScan.Views, r.GetProgress().ViewsPushed);
                Assert.AreEqual(TestScan.N * TestScan.N * TestScan.N, r.ReadVolume().Length);
            }
        }
    }
}
