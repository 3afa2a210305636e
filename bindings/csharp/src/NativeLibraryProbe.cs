// The first call into the native library, made in one place, so that a
// library the loader cannot find or load surfaces as an exception that names
// the file and the folders it was looked for in, instead of the runtime's
// bare DllNotFoundException (Mono's says only "fdk assembly:<unknown
// assembly> type:<unknown type> member:(null)").
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;

namespace Fdk
{
    internal static class NativeLibraryProbe
    {
        private static int s_loaded;

        /// <summary>
        /// Loads the library (by calling fdk_version) once; throws
        /// <see cref="FdkLibraryNotFoundException"/> when that fails.
        /// </summary>
        internal static void EnsureLoaded()
        {
            if (Volatile.Read(ref s_loaded) != 0) return;
            try
            {
                NativeMethods.fdk_version();
            }
            catch (DllNotFoundException e)
            {
                throw Describe(e);
            }
            catch (BadImageFormatException e)
            {
                throw Describe(e);
            }
            Volatile.Write(ref s_loaded, 1);
        }

        /// <summary>The file DllImport("fdk") stands for on this platform.</summary>
        internal static string FileName
        {
            get
            {
                if (IsWindows) return "fdk.dll";
                return IsMac ? "libfdk.dylib" : "libfdk.so";
            }
        }

        // Without RuntimeInformation, which .NET Framework 4.6.1 lacks: Windows
        // by its path separator, macOS by a file every macOS has; 64-bit
        // means x64 (the only 64-bit target the package ships).
        private static bool IsWindows { get { return Path.DirectorySeparatorChar == '\\'; } }

        private static bool IsMac
        {
            get { return !IsWindows && File.Exists("/System/Library/CoreServices/SystemVersion.plist"); }
        }

        private static string RuntimeIdentifier
        {
            get
            {
                string arch = IntPtr.Size == 8 ? "x64" : "x86";
                return (IsWindows ? "win-" : IsMac ? "osx-" : "linux-") + arch;
            }
        }

        /// <summary>
        /// The folders the loader looks in before the system's own places:
        /// the assembly's and the application's folders, then the search path
        /// variable. (.NET also takes the package's runtimes/RID/native folder
        /// from the application's deps.json; Mono and .NET Framework do not.)
        /// </summary>
        internal static List<string> SearchedFolders()
        {
            var folders = new List<string>();
            string assemblyDir = Path.GetDirectoryName(typeof(NativeLibraryProbe).Assembly.Location);
            if (!string.IsNullOrEmpty(assemblyDir)) Add(folders, assemblyDir);
            string appDir = AppDomain.CurrentDomain.BaseDirectory;
            if (!string.IsNullOrEmpty(appDir)) Add(folders, appDir.TrimEnd('/', '\\'));
            string variable = IsWindows ? "PATH" : IsMac ? "DYLD_LIBRARY_PATH" : "LD_LIBRARY_PATH";
            string value = Environment.GetEnvironmentVariable(variable);
            if (!string.IsNullOrEmpty(value))
                foreach (string dir in value.Split(new[] { Path.PathSeparator }))
                    if (dir.Length != 0) Add(folders, dir);
            return folders;
        }

        /// <summary>
        /// The package's own copy when the assembly runs from an extracted
        /// package (lib/netstandard2.0/ beside runtimes/): where to point a
        /// runtime that does not read runtimes/.
        /// </summary>
        private static string PackageCopy()
        {
            string assemblyDir = Path.GetDirectoryName(typeof(NativeLibraryProbe).Assembly.Location);
            if (string.IsNullOrEmpty(assemblyDir)) return null;
            string relative = string.Join(Path.DirectorySeparatorChar.ToString(),
                new[] { "..", "..", "runtimes", RuntimeIdentifier, "native", FileName });
            string path = Path.GetFullPath(Path.Combine(assemblyDir, relative));
            return File.Exists(path) ? path : null;
        }

        private static void Add(List<string> folders, string dir)
        {
            if (!folders.Contains(dir)) folders.Add(dir);
        }

        private static FdkLibraryNotFoundException Describe(Exception e)
        {
            string file = FileName;
            List<string> folders = SearchedFolders();
            var present = new List<string>();
            foreach (string dir in folders)
                if (File.Exists(Path.Combine(dir, file))) present.Add(Path.Combine(dir, file));
            string system = IsWindows ? "the system folders"
                          : IsMac ? "the system's default folders"
                          : "the dynamic linker's cache and default folders (ldconfig -p)";
            var message = new System.Text.StringBuilder();
            message.Append("fdk's native library ").Append(file).Append(" could not be loaded. ");
            if (present.Count != 0)
                message.Append("It exists at ").Append(string.Join(", ", present.ToArray()))
                       .Append(" but did not load: a library it needs is missing, or it is not a ")
                       .Append(RuntimeIdentifier).Append(" library");
            else
                message.Append("It is in none of the folders searched");
            message.Append(". Searched: ").Append(string.Join(", ", folders.ToArray()))
                   .Append(", and ").Append(system).Append(". ");
            string packageCopy = PackageCopy();
            if (packageCopy != null)
                message.Append("The package's copy is ").Append(packageCopy)
                       .Append(", where only .NET (Core) looks: on Mono and .NET Framework copy its folder's ")
                       .Append("files next to the application or put the folder on the search path. ");
            else
                message.Append("The NuGet package holds it in runtimes/").Append(RuntimeIdentifier)
                       .Append("/native/: .NET (Core) finds it there; on Mono and .NET Framework copy ")
                       .Append("that folder's files next to the application or put it on the search path. ");
            message.Append("Runtime's message: ").Append(e.Message);
            return new FdkLibraryNotFoundException(message.ToString(), file, folders, e);
        }
    }
}
