// Native failures surface as FdkException with the native status and message.
using System;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class ErrorTests
    {
        private static readonly int Pixels = TestScan.Columns * TestScan.Rows;

        [Test]
        public void DuplicatePushCarriesStatusAndNativeMessage()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                var pixels = new float[Pixels];
                r.PushProjection(0, pixels);
                var e = Assert.Throws<FdkException>(() => r.PushProjection(0, pixels));
                Assert.AreEqual(FdkStatus.Duplicate, e.Status);
                StringAssert.Contains("already pushed", e.NativeMessage);
                StringAssert.Contains("FDK_ERROR_DUPLICATE", e.Message);
                StringAssert.Contains("already pushed", e.Message);
                // The handle stays usable.
                r.PushProjection(1, pixels);
                Assert.AreEqual(2, r.GetProgress().ViewsPushed);
            }
        }

        [Test]
        public void CreateFailureCarriesTheThreadLocalCreateMessage()
        {
            ReconstructionSettings settings = TestScan.Settings();
            settings.Filter.Cutoff = 2.0;
            var e = Assert.Throws<FdkException>(() => new Reconstructor(settings));
            Assert.AreEqual(FdkStatus.InvalidArgument, e.Status);
            StringAssert.Contains("cutoff", e.NativeMessage);
        }

        [Test]
        public void BudgetTooSmallFailsAtCreate()
        {
            ReconstructionSettings settings = TestScan.Settings();
            settings.HostMemoryBudget = 4096;
            var e = Assert.Throws<FdkException>(() => new Reconstructor(settings));
            Assert.AreEqual(FdkStatus.Budget, e.Status);
            Assert.IsNotEmpty(e.NativeMessage);
        }

        [Test]
        public void WrongOrderAndRangeAndValues()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                var pixels = new float[Pixels];
                var e = Assert.Throws<FdkException>(() => r.ReadSlab(0));
                Assert.AreEqual(FdkStatus.InvalidState, e.Status);
                Assert.IsNotEmpty(e.NativeMessage);

                e = Assert.Throws<FdkException>(() => r.PushProjection(TestScan.Views, pixels));
                Assert.AreEqual(FdkStatus.OutOfRange, e.Status);

                pixels[7] = float.NaN;
                e = Assert.Throws<FdkException>(() => r.PushProjection(0, pixels));
                Assert.AreEqual(FdkStatus.InvalidArgument, e.Status);

                e = Assert.Throws<FdkException>(() => r.Finish());
                Assert.AreEqual(FdkStatus.InvalidState, e.Status, "finish with no view");

                e = Assert.Throws<FdkException>(() => r.GetSlabInfo(99));
                Assert.AreEqual(FdkStatus.OutOfRange, e.Status);

                // A buffer one float short: the native size check.
                pixels[7] = 0;
                r.PushProjection(0, pixels);
                r.Finish();
                SlabInfo info = r.GetSlabInfo(0);
                var shortBuffer = new float[info.FloatCount - 1];
                e = Assert.Throws<FdkException>(() => r.ReadSlab(0, shortBuffer));
                Assert.AreEqual(FdkStatus.InvalidArgument, e.Status);
            }
        }

        [Test]
        public void ManagedArgumentChecks()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                Assert.Throws<ArgumentNullException>(() => r.PushProjection(0, (float[])null));
                Assert.Throws<ArgumentOutOfRangeException>(() => r.PushProjection(0, new float[Pixels - 1]));
                Assert.Throws<ArgumentOutOfRangeException>(() => r.PushProjection(0, new float[Pixels], 1));
                Assert.Throws<ArgumentOutOfRangeException>(() => r.PushProjection(0, new float[Pixels], -1));
                Assert.Throws<ArgumentNullException>(() => r.ReadSlab(0, null));
            }
            Assert.Throws<ArgumentNullException>(() => new Reconstructor(null));
            ReconstructionSettings settings = TestScan.Settings();
            settings.HostMemoryBudget = -1;
            Assert.Throws<ArgumentOutOfRangeException>(() => new Reconstructor(settings));
        }
    }
}
