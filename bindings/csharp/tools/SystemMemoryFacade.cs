// System.Memory for Debian's Mono: a facade that forwards the Span family to
// Mono's mscorlib, which has it. Fdk.dll (netstandard2.0) references
// System.Memory 4.0.1.1 as any netstandard2.0 library using Span does; .NET
// Core has that assembly, .NET Framework gets it from the System.Memory
// package, and Mono as packaged upstream ships such a facade, but Debian's
// Mono 6.8 does not. build.sh builds it, signed with the public half of the
// open key that System.Memory uses (taken from Mono's netstandard.dll, signed
// with the same key; delay-signed: Mono does not verify it), and puts it on
// MONO_PATH for the tests and the example. It is not in the package.
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("4.0.1.1")]
[assembly: TypeForwardedTo(typeof(System.Span<>))]
[assembly: TypeForwardedTo(typeof(System.ReadOnlySpan<>))]
[assembly: TypeForwardedTo(typeof(System.Memory<>))]
[assembly: TypeForwardedTo(typeof(System.ReadOnlyMemory<>))]
[assembly: TypeForwardedTo(typeof(System.MemoryExtensions))]
[assembly: TypeForwardedTo(typeof(System.Buffers.MemoryHandle))]
[assembly: TypeForwardedTo(typeof(System.Buffers.IPinnable))]
[assembly: TypeForwardedTo(typeof(System.Buffers.MemoryManager<>))]
[assembly: TypeForwardedTo(typeof(System.Runtime.InteropServices.MemoryMarshal))]
