// When run from an extracted NuGet package (FDK_EXPECT_PACKAGE_DIR set, as
// the CI does), the managed assembly and the native library in use must both
// come from that package, not from a build tree.
using System;
using System.IO;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class PackageTests
    {
        private static string PackageDir()
        {
            string dir = Environment.GetEnvironmentVariable("FDK_EXPECT_PACKAGE_DIR");
            if (string.IsNullOrEmpty(dir))
                Assert.Ignore("FDK_EXPECT_PACKAGE_DIR not set: not running from a package");
            return Path.GetFullPath(dir).TrimEnd('/') + "/";
        }

        [Test]
        public void ManagedAssemblyComesFromThePackage()
        {
            string dir = PackageDir();
            string location = Path.GetFullPath(typeof(Reconstructor).Assembly.Location);
            StringAssert.StartsWith(dir + "lib/", location);
        }

        [Test]
        public void NativeLibraryComesFromThePackage()
        {
            string dir = PackageDir();
            if (!File.Exists("/proc/self/maps")) Assert.Ignore("needs Linux's /proc/self/maps");
            // Make sure the library is loaded, then find every mapping of it.
            Assert.Greater(Reconstructor.NativeVersionNumber, 0);
            int found = 0;
            foreach (string line in File.ReadAllLines("/proc/self/maps"))
            {
                int slash = line.IndexOf('/');
                if (slash < 0) continue;
                string path = line.Substring(slash);
                if (!Path.GetFileName(path).StartsWith("libfdk.so")) continue;
                StringAssert.StartsWith(dir + "runtimes/linux-x64/native/", path);
                ++found;
            }
            Assert.Greater(found, 0, "libfdk.so is not mapped");
        }
    }
}
