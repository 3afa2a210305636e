// IProgress<ReconstructionProgress> given to the constructor: reported after
// each projection stored and each slab computed, on the working thread; a
// System.Progress<T> posts the reports elsewhere.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class ProgressReporterTests
    {
        private sealed class Recorder : IProgress<ReconstructionProgress>
        {
            public readonly List<ReconstructionProgress> Reports = new List<ReconstructionProgress>();
            public readonly List<int> Threads = new List<int>();
            public void Report(ReconstructionProgress value)
            {
                Reports.Add(value);
                Threads.Add(Thread.CurrentThread.ManagedThreadId);
            }
        }

        [Test]
        public void EveryStoredViewAndComputedSlabIsReported()
        {
            var recorder = new Recorder();
            using (var r = new Reconstructor(TestScan.Settings(), recorder))
            {
                TestScan.PushAll(r);
                r.Finish();
                int slabs = r.SlabCount;
                for (int s = 0; s < slabs; ++s) r.ReadSlab(s);

                Assert.GreaterOrEqual(recorder.Reports.Count, TestScan.Views + slabs);
                ReconstructionProgress last = recorder.Reports[recorder.Reports.Count - 1];
                Assert.AreEqual(TestScan.Views, last.ViewsPushed);
                Assert.AreEqual(slabs, last.SlabsDone);
                Assert.AreEqual(Phase.Done, last.Phase);
                for (int i = 1; i < recorder.Reports.Count; ++i)
                    Assert.GreaterOrEqual(recorder.Reports[i].ViewsPushed, recorder.Reports[i - 1].ViewsPushed);
                // The synchronous reporter runs on the working thread: this one.
                Assert.That(recorder.Threads, Is.All.EqualTo(Thread.CurrentThread.ManagedThreadId));
            }
        }

        [Test]
        public void BackprojectionProgressEndsAtItsTotalAndHannCutoffVSmooths()
        {
            float[] plain, smooth;
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                Assert.AreEqual((long)TestScan.Views * TestScan.N, r.GetProgress().BackprojectionTotal);
                Assert.AreEqual(0L, r.GetProgress().BackprojectionDone);
                TestScan.PushAll(r);
                r.Finish();
                plain = r.ReadVolume();
                ReconstructionProgress p = r.GetProgress();
                Assert.AreEqual((long)TestScan.Views * TestScan.N, p.BackprojectionDone);
                Assert.AreEqual(p.BackprojectionTotal, p.BackprojectionDone);
            }
            ReconstructionSettings settings = TestScan.Settings();
            settings.Filter.HannCutoffV = 0.4;
            using (var r = new Reconstructor(settings))
            {
                TestScan.PushAll(r);
                r.Finish();
                smooth = r.ReadVolume();
            }
            Assert.AreEqual(plain.Length, smooth.Length);
            Assert.IsFalse(plain.SequenceEqual(smooth), "hann_cutoff_v changed nothing");
        }

        [Test]
        public void TheReporterAndTheEventBothRun()
        {
            var recorder = new Recorder();
            int events = 0;
            using (var r = new Reconstructor(TestScan.Settings(), recorder))
            {
                r.Progress += (s, e) => ++events;
                TestScan.PushAll(r, 10);
            }
            Assert.AreEqual(10, events);
            Assert.AreEqual(10, recorder.Reports.Count);
        }

        [Test]
        public void AReporterCallingBackIntoTheReconstructorIsRefusedAfterTheCall()
        {
            Reconstructor self = null;
            var reporter = new CallingReporter(() => { int unused = self.SlabCount; });
            using (var r = new Reconstructor(TestScan.Settings(), reporter))
            {
                self = r;
                var pixels = new float[TestScan.Columns * TestScan.Rows];
                Assert.Throws<InvalidOperationException>(() => r.PushProjection(0, pixels));
                Assert.AreNotEqual(ViewStateKind.Absent, r.GetViewState(0).State, "the push itself went through");
            }
        }

        private sealed class CallingReporter : IProgress<ReconstructionProgress>
        {
            private readonly Action _call;
            public CallingReporter(Action call) { _call = call; }
            public void Report(ReconstructionProgress value) { _call(); }
        }

        [Test]
        public void SystemProgressPostsTheReports()
        {
            // Without a synchronization context, Progress<T> posts to the
            // thread pool: the reports arrive there, not on the pushing thread.
            var arrived = new CountdownEvent(5);
            int pusher = Thread.CurrentThread.ManagedThreadId, onPusher = 0;
            var progress = new Progress<ReconstructionProgress>(p => {
                if (Thread.CurrentThread.ManagedThreadId == pusher) Interlocked.Increment(ref onPusher);
                if (!arrived.IsSet) arrived.Signal();
            });
            using (var r = new Reconstructor(TestScan.Settings(), progress))
            {
                TestScan.PushAll(r, 5);
                Assert.IsTrue(arrived.Wait(TimeSpan.FromSeconds(30)), "5 reports did not arrive");
            }
            Assert.AreEqual(0, onPusher);
        }
    }
}
