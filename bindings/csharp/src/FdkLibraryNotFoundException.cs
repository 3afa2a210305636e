// The exception for a native library that is missing or does not load.
using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;

namespace Fdk
{
    /// <summary>
    /// fdk's native library (libfdk.so, fdk.dll) could not be found or
    /// loaded. Unlike the runtime's own <see cref="DllNotFoundException"/>,
    /// which it derives from (so existing handlers still catch it), it names
    /// the file and the folders searched, and says whether the file was there
    /// (then one of its own dependencies is missing, or it is built for
    /// another platform).
    /// </summary>
    public sealed class FdkLibraryNotFoundException : DllNotFoundException
    {
        /// <summary>The file looked for: libfdk.so, fdk.dll or libfdk.dylib.</summary>
        public string FileName { get; private set; }

        /// <summary>The folders searched, in order (the system's own places come after).</summary>
        public ReadOnlyCollection<string> SearchedFolders { get; private set; }

        internal FdkLibraryNotFoundException(string message, string fileName, IList<string> searchedFolders,
                                             Exception inner)
            : base(message, inner)
        {
            FileName = fileName;
            SearchedFolders = new ReadOnlyCollection<string>(searchedFolders);
        }
    }
}
