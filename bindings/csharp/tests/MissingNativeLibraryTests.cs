// A native library the loader cannot find, or finds but cannot load, must
// raise FdkLibraryNotFoundException naming the file and the folders searched
// (not the runtime's bare DllNotFoundException). Each case runs NativeProbe.exe
// in a fresh process whose LD_LIBRARY_PATH hides the package's libfdk.so.
using System;
using System.Diagnostics;
using System.IO;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class MissingNativeLibraryTests
    {
        private string _scratch;

        [SetUp]
        public void MakeScratch()
        {
            _scratch = Path.Combine(Path.GetTempPath(), "fdk-probe-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(_scratch);
        }

        [TearDown]
        public void RemoveScratch() { Directory.Delete(_scratch, true); }

        private static int RunProbe(string ldLibraryPath, out string output)
        {
            string probe = Path.Combine(Path.GetDirectoryName(typeof(MissingNativeLibraryTests).Assembly.Location),
                                        "NativeProbe.exe");
            Assert.IsTrue(File.Exists(probe), probe + " not built (build.sh tests builds it)");
            var info = new ProcessStartInfo("mono", "--debug \"" + probe + "\"") {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                WorkingDirectory = Path.GetTempPath(),
            };
            info.EnvironmentVariables["LD_LIBRARY_PATH"] = ldLibraryPath;
            using (Process p = Process.Start(info))
            {
                string stderr = null;
                var errThread = new System.Threading.Thread(() => stderr = p.StandardError.ReadToEnd());
                errThread.Start();
                output = p.StandardOutput.ReadToEnd();
                p.WaitForExit();
                errThread.Join();
                output += stderr;
                return p.ExitCode;
            }
        }

        private static void RequireNoSystemCopy()
        {
            // The dynamic linker's own places cannot be hidden from a child
            // process: an installed libfdk would be found there.
            foreach (string dir in new[] { "/lib", "/usr/lib", "/usr/local/lib", "/lib/x86_64-linux-gnu",
                                           "/usr/lib/x86_64-linux-gnu" })
                Assert.IsFalse(File.Exists(Path.Combine(dir, "libfdk.so")),
                               "libfdk.so is installed in " + dir + ": this test needs it absent");
        }

        [Test]
        public void AbsentLibraryNamesTheFileAndTheFoldersSearched()
        {
            RequireNoSystemCopy();
            string output;
            Assert.AreEqual(3, RunProbe(_scratch, out output), output);
            StringAssert.Contains("file: libfdk.so", output);
            StringAssert.Contains("folder: " + _scratch + "\n", output);
            StringAssert.Contains("The package's copy is ", output);
            StringAssert.Contains("It is in none of the folders searched", output);
            StringAssert.Contains(_scratch, output.Substring(output.IndexOf("message: ", StringComparison.Ordinal)));
        }

        [Test]
        public void LibraryThatDoesNotLoadIsNamedWithItsPath()
        {
            RequireNoSystemCopy();
            string broken = Path.Combine(_scratch, "libfdk.so");
            File.WriteAllText(broken, "not an ELF file");
            string output;
            Assert.AreEqual(3, RunProbe(_scratch, out output), output);
            StringAssert.Contains("It exists at " + broken + " but did not load", output);
        }

        [Test]
        public void TheProbeLoadsThePackagedLibrary()
        {
            // The control: with this process's search path (build.sh's, the
            // package's native folder) the same probe loads the library.
            string output;
            Assert.AreEqual(0, RunProbe(Environment.GetEnvironmentVariable("LD_LIBRARY_PATH") ?? "", out output),
                            output);
            StringAssert.Contains("version " + Reconstructor.NativeVersion, output);
        }
    }
}
