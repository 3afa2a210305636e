// A process of its own for MissingNativeLibraryTests: the native library is
// loaded once per process, so "not found" can only be tested in a fresh one,
// started with a search path that hides libfdk.so.
// Exit 0: loaded (prints the version); 3: FdkLibraryNotFoundException (prints
// FileName, the folders, then Message); 4: any other exception.
using System;
using Fdk;

internal static class NativeProbe
{
    private static int Main()
    {
        try
        {
            Console.WriteLine("version " + Reconstructor.NativeVersion);
            return 0;
        }
        catch (FdkLibraryNotFoundException e)
        {
            Console.WriteLine("file: " + e.FileName);
            foreach (string folder in e.SearchedFolders) Console.WriteLine("folder: " + folder);
            Console.WriteLine("message: " + e.Message);
            return 3;
        }
        catch (Exception e)
        {
            Console.WriteLine("other: " + e);
            return 4;
        }
    }
}
