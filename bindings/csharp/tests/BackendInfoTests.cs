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
            Console.WriteLine("backend info: CUDA built {0}, usable {1}, SASS [{2}], PTX {3}, {4} device(s), " +
                              "driver CUDA {5} (needs {6}); {7}",
                              info.CudaBuilt, info.CudaUsable, string.Join(",", info.SassArchitectures),
                              info.PtxArchitecture, info.DeviceCount, info.DriverVersionText,
                              info.DriverRequiredText, info.Message);
        }

        [Test]
        public void SaysWhichDriverThereIsAndWhichTheGpuCodeNeeds()
        {
            BackendInfo info = BackendInfo.Query();
            Assert.GreaterOrEqual(info.DriverVersion, 0);
            Assert.GreaterOrEqual(info.DriverRequired, 0);
            if (info.CudaBuilt)  // GPU code built by CUDA 13.0: NVIDIA driver 580 or newer
                Assert.GreaterOrEqual(info.DriverRequired, 13000);
            else
                Assert.IsFalse(info.CudaUsable);
            if (info.CudaUsable)
            {
                Assert.Greater(info.DriverRequired, 0);
                Assert.GreaterOrEqual(info.DriverVersion, info.DriverRequired);
            }
            Assert.AreEqual(BackendInfo.FormatCudaVersion(info.DriverVersion), info.DriverVersionText);
            Assert.AreEqual(BackendInfo.FormatCudaVersion(info.DriverRequired), info.DriverRequiredText);
        }

        [Test]
        public void FormatsCudaVersionsAsTheDriverDoes()
        {
            Assert.AreEqual("13.0", BackendInfo.FormatCudaVersion(13000));
            Assert.AreEqual("12.8", BackendInfo.FormatCudaVersion(12080));
            Assert.AreEqual("13.1", BackendInfo.FormatCudaVersion(13010));
            Assert.AreEqual("", BackendInfo.FormatCudaVersion(0));
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
