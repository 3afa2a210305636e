using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyTitle("Fdk")]
[assembly: AssemblyDescription("P/Invoke binding of fdk, cone-beam CT reconstruction (FDK)")]
[assembly: AssemblyProduct("fdk")]
// The version attributes come from fdk.h: bindings/csharp/build.sh generates
// them for the mcs build, and Fdk.csproj's <Version> (checked against fdk.h by
// build.sh) for the SDK build.

// The tests check struct layouts and call the C ABI directly.
[assembly: InternalsVisibleTo("Fdk.Tests")]
