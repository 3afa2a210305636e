// ReadSlabAsync: the same bytes as ReadSlab; the caller is not blocked while
// a slab is computed; a read the library does not make ready goes to a
// dedicated thread, never a thread-pool one; CancellationTokens (per call
// here, of the constructor elsewhere) map to fdk_cancel.
using System;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class AsyncTests
    {
        private static Reconstructor Finished(IProgress<ReconstructionProgress> progress = null)
        {
            var r = new Reconstructor(TestScan.Settings(), progress);
            TestScan.PushAll(r);
            r.Finish();
            return r;
        }

        private static float[] SyncSlab(int slab)
        {
            using (Reconstructor r = Finished()) return r.ReadSlab(slab);
        }

        [Test]
        public void ReadSlabAsyncReturnsAtOnceAndReadsTheSlab()
        {
            using (Reconstructor r = Finished())
            {
                var destination = new float[r.GetSlabInfo(2).FloatCount];
                // No slab was requested yet: the first poll finds slab 2 not
                // ready, and the call returns a task still running.
                Task read = r.ReadSlabAsync(2, destination);
                Assert.IsFalse(read.IsCompleted, "the caller waited for the computation");
                Assert.IsTrue(read.Wait(TimeSpan.FromSeconds(60)));
                Assert.AreEqual(SyncSlab(2), destination);
            }
        }

        [Test]
        public void EverySlabReadConcurrentlyMatchesTheSyncRead()
        {
            using (Reconstructor r = Finished())
            {
                int count = r.SlabCount;
                var reads = new Task<float[]>[count];
                for (int s = count - 1; s >= 0; --s) reads[s] = r.ReadSlabAsync(s);
                Assert.IsTrue(Task.WaitAll(reads, TimeSpan.FromSeconds(60)));
                for (int s = 0; s < count; ++s) Assert.AreEqual(SyncSlab(s), reads[s].Result, "slab " + s);
            }
        }

        [Test]
        public void AStalledReadRunsOnADedicatedThreadNotThePool()
        {
            TimeSpan saved = Reconstructor.StallBeforeBlockingRead;
            Reconstructor.StallBeforeBlockingRead = TimeSpan.Zero;  // every not-ready slab: blocking read
            try
            {
                // Progress is raised on the thread computing a slab a read waits for.
                bool? onPool = null;
                var progress = new Reporter(p => {
                    if (p.SlabsDone > 0 && onPool == null)  // the first slab, reported by its reader
                        onPool = Thread.CurrentThread.IsThreadPoolThread;
                });
                using (Reconstructor r = Finished(progress))
                {
                    float[] slab = r.ReadSlabAsync(1).Result;
                    Assert.AreEqual(SyncSlab(1), slab);
                    Assert.AreEqual(false, onPool, "the blocking read ran on a thread-pool thread (or no slab was reported)");
                }
            }
            finally
            {
                Reconstructor.StallBeforeBlockingRead = saved;
            }
        }

        private sealed class Reporter : IProgress<ReconstructionProgress>
        {
            private readonly Action<ReconstructionProgress> _report;
            public Reporter(Action<ReconstructionProgress> report) { _report = report; }
            public void Report(ReconstructionProgress value) { _report(value); }
        }

        [Test]
        public void ReadSlabAsyncChecksItsArgumentsAtOnce()
        {
            using (Reconstructor r = Finished())
            {
                Assert.Throws<ArgumentException>(() => r.ReadSlabAsync(0, new float[3]));
                var e = Assert.Throws<FdkException>(() => r.ReadSlabAsync(r.SlabCount, new float[1]));
                Assert.AreEqual(FdkStatus.OutOfRange, e.Status);
            }
        }

        [Test]
        public void ACancelledTokenCancelsTheReadAndTheReconstruction()
        {
            using (Reconstructor r = Finished())
            using (var cts = new CancellationTokenSource())
            {
                cts.Cancel();
                Task<float[]> read = r.ReadSlabAsync(0, cts.Token);
                var e = Assert.Throws<AggregateException>(() => read.Wait(TimeSpan.FromSeconds(60)));
                Assert.IsInstanceOf<OperationCanceledException>(e.InnerException);
                Assert.IsTrue(read.IsCanceled);
                Assert.AreEqual(Phase.Cancelled, r.GetProgress().Phase);
            }
        }

        [Test]
        public void FinishWithACancelledTokenCancelsAndThrowsOperationCanceled()
        {
            using (var cts = new CancellationTokenSource())
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                cts.Cancel();
                var e = Assert.Throws<OperationCanceledException>(() => r.Finish(cts.Token));
                Assert.AreEqual(cts.Token, e.CancellationToken);
                Assert.IsInstanceOf<FdkException>(e.InnerException);
                Assert.AreEqual(FdkStatus.Cancelled, ((FdkException)e.InnerException).Status);
                Assert.AreEqual(Phase.Cancelled, r.GetProgress().Phase);
            }
        }

        [Test]
        public void FinishWithAnUncancelledTokenFinishesAndReleasesIt()
        {
            using (var cts = new CancellationTokenSource())
            {
                using (var r = new Reconstructor(TestScan.Settings()))
                {
                    TestScan.PushAll(r);
                    r.Finish(cts.Token);
                    r.ReadSlab(0);
                    // The registration is gone: a later cancel leaves the reconstruction alone.
                    cts.Cancel();
                    Assert.AreNotEqual(Phase.Cancelled, r.GetProgress().Phase);
                    r.ReadSlab(1);
                }
            }
        }
    }
}
