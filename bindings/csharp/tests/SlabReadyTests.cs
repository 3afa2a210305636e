// Reading without blocking (IsSlabReady) and the per-GPU figures
// (GetDeviceStats) through the binding, on the CPU backend.
using System;
using System.Diagnostics;
using System.Threading;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class SlabReadyTests
    {
        private static void WaitUntilReady(Reconstructor r, int slab)
        {
            var clock = Stopwatch.StartNew();
            while (!r.IsSlabReady(slab))
            {
                Assert.Less(clock.Elapsed.TotalSeconds, 60.0, "slab " + slab + " never became ready");
                Thread.Sleep(1);
            }
        }

        [Test]
        public void ReadySlabsAreComputedInTheBackgroundAndReadWithoutComputing()
        {
            float[] reference;
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                r.Finish();
                reference = r.ReadVolume();
            }
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                r.Finish();
                int slabs = r.SlabCount;
                Assert.Greater(slabs, 1);
                for (int s = slabs - 1; s >= 0; --s)
                {
                    WaitUntilReady(r, s);
                    double before = r.GetTimings().BackprojectSeconds;
                    Assert.Greater(before, 0.0, "computed in the background");
                    float[] slab = r.ReadSlab(s);
                    Assert.AreEqual(before, r.GetTimings().BackprojectSeconds, "the read computed the slab");
                    SlabInfo info = r.GetSlabInfo(s);
                    long first = info.YBegin * (long)TestScan.N * TestScan.N;
                    for (int i = 0; i < slab.Length; ++i)
                        if (slab[i] != reference[first + i])
                            Assert.Fail("slab " + s + " differs at " + i);
                }
                Assert.AreEqual(Phase.Done, r.GetProgress().Phase);
            }
        }

        [Test]
        public void IsSlabReadyRefusesMisuseWithTheNativeStatus()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                var e = Assert.Throws<FdkException>(() => r.IsSlabReady(0));
                Assert.AreEqual(FdkStatus.InvalidState, e.Status);
                StringAssert.Contains("before fdk_finish", e.NativeMessage);
                TestScan.PushAll(r);
                r.Finish();
                e = Assert.Throws<FdkException>(() => r.IsSlabReady(r.SlabCount));
                Assert.AreEqual(FdkStatus.OutOfRange, e.Status);
                e = Assert.Throws<FdkException>(() => r.IsSlabReady(-1));
                Assert.AreEqual(FdkStatus.OutOfRange, e.Status);
                r.IsSlabReady(0);  // requests it
                r.Cancel();
                e = Assert.Throws<FdkException>(() => r.IsSlabReady(0));
                Assert.AreEqual(FdkStatus.Cancelled, e.Status);
            }
            var disposed = new Reconstructor(TestScan.Settings());
            disposed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => disposed.IsSlabReady(0));
            Assert.Throws<ObjectDisposedException>(() => disposed.GetDeviceStats());
        }

        [Test]
        public void PolledFromAnotherThreadWhileReading()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                r.Finish();
                int slabs = r.SlabCount;
                Exception pollerError = null;
                bool done = false;
                var poller = new Thread(() => {
                    try
                    {
                        while (!Volatile.Read(ref done))
                            for (int s = slabs - 1; s >= 0; --s) r.IsSlabReady(s);
                    }
                    catch (Exception e) { pollerError = e; }
                });
                poller.Start();
                float[] volume = r.ReadVolume();
                Volatile.Write(ref done, true);
                Assert.IsTrue(poller.Join(TimeSpan.FromSeconds(60)), "the poller hung");
                Assert.IsNull(pollerError, pollerError == null ? "" : pollerError.ToString());
                Assert.AreEqual(TestScan.N * TestScan.N * TestScan.N, volume.Length);
                for (int s = 0; s < slabs; ++s) Assert.IsTrue(r.IsSlabReady(s));
            }
        }

        [Test]
        public void DeviceStatsOnTheCpuListNoDevice()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                DeviceStats before = r.GetDeviceStats();
                Assert.IsNotNull(before.Devices);
                Assert.AreEqual(0, before.Devices.Count);
                TestScan.PushAll(r);
                r.Finish();
                r.ReadSlab(0);
                Assert.AreEqual(0, r.GetDeviceStats().Devices.Count);
            }
        }
    }
}
