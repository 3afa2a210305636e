// BackendInfo.Query (fdk_get_backend_info): what the native library says
// about its backends, and that the Auto choice agrees with it.
using System;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class BackendInfoTests
    {
        [Test]
        public void SaysWhatTheLibraryCarriesAndWhyCudaIsNotUsed()
        {
            BackendInfo info = BackendInfo.Query();
            if (info.CudaBuilt)
            {
                Assert.IsNotEmpty(info.SassArchitectures, "a CUDA build carries machine code");
                for (int i = 1; i < info.SassArchitectures.Count; ++i)
                    Assert.Less(info.SassArchitectures[i - 1], info.SassArchitectures[i]);
            }
            else
            {
                Assert.IsEmpty(info.SassArchitectures);
            }
            if (info.CudaUsable)
            {
                Assert.Greater(info.DeviceCount, 0);
                Assert.AreEqual("", info.Message);
            }
            else
            {
                Assert.IsNotEmpty(info.Message, "CUDA unusable must say why");
            }
            Assert.AreEqual(Math.Min(info.DeviceCount, 16), info.Devices.Count);
            Console.WriteLine("backend info: CUDA built {0}, usable {1}, SASS [{2}], PTX {3}, {4} device(s); {5}",
                              info.CudaBuilt, info.CudaUsable, string.Join(",", info.SassArchitectures),
                              info.PtxArchitecture, info.DeviceCount, info.Message);
        }

        [Test]
        public void TheAutoBackendFollowsIt()
        {
            BackendInfo info = BackendInfo.Query();
            ReconstructionSettings s = TestScan.Settings();
            s.Backend = Backend.Auto;
            using (var r = new Reconstructor(s))
                Assert.AreEqual(info.CudaUsable ? Backend.Cuda : Backend.Cpu, r.GetPlanInfo().Backend);
        }
    }
}
