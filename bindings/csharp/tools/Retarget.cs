// Retarget: turns the Fdk.dll that mcs builds against Mono's own class
// library into a netstandard2.0 assembly, the one the NuGet package ships in
// lib/netstandard2.0/.
//
// Why: Debian has no .NET SDK and no netstandard reference assembly that
// defines types (Mono's netstandard.dll files are facades that forward to
// mscorlib), nor System.Memory. So mcs compiles against Mono's mscorlib,
// whose Span family is corefx's own source, and this tool then:
//   1. checks that every type the assembly uses from mscorlib, System and
//      System.Core is part of netstandard 2.0 (the exported types of Mono's
//      netstandard 2.0.0.0 facade), except the Span family, which
//      netstandard2.0 code takes from the System.Memory package;
//   2. checks that every member it uses outside the Span family exists in
//      .NET Framework 4.6.1's reference assemblies (Mono's 4.6.1-api, the
//      oldest framework netstandard2.0 serves);
//   3. points those type references at netstandard 2.0.0.0 and System.Memory
//      4.0.1.1 (the assembly of the System.Memory 4.5.3 package), drops the
//      CAS security declarations mcs adds for -unsafe (.NET Core ignores
//      them and they name mscorlib), and writes the result.
// References to other assemblies (an application's to Fdk) are kept as
// they are, and their members are not checked.
// It prints the assembly references of the output; build.sh checks them.
//
//   mono Retarget.exe IN.dll OUT.dll API_DIR NETSTANDARD_FACADE
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Mono.Cecil;

internal static class Retarget
{
    // The types netstandard2.0 code gets from System.Memory, not netstandard.
    private static readonly HashSet<string> MemoryTypes = new HashSet<string> {
        "System.Span`1", "System.ReadOnlySpan`1", "System.Memory`1", "System.ReadOnlyMemory`1",
        "System.MemoryExtensions", "System.Buffers.MemoryHandle",
        "System.Buffers.IPinnable", "System.Buffers.MemoryManager`1",
        "System.Runtime.InteropServices.MemoryMarshal",
    };
    private static readonly HashSet<string> MonoFramework = new HashSet<string> {
        "mscorlib", "System", "System.Core",
    };

    // Resolves names to the reference assemblies of API_DIR only (Cecil's
    // default resolver would pick Mono's implementation mscorlib).
    private sealed class ApiResolver : IAssemblyResolver
    {
        private readonly string _dir;
        private readonly Dictionary<string, AssemblyDefinition> _cache = new Dictionary<string, AssemblyDefinition>();
        public ApiResolver(string dir) { _dir = dir; }
        public AssemblyDefinition Resolve(AssemblyNameReference name)
        {
            return Resolve(name, new ReaderParameters { AssemblyResolver = this });
        }
        public AssemblyDefinition Resolve(AssemblyNameReference name, ReaderParameters parameters)
        {
            AssemblyDefinition a;
            if (_cache.TryGetValue(name.Name, out a)) return a;
            foreach (string candidate in new[] { Path.Combine(_dir, name.Name + ".dll"),
                                                 Path.Combine(_dir, "Facades", name.Name + ".dll") })
            {
                if (!File.Exists(candidate)) continue;
                a = AssemblyDefinition.ReadAssembly(candidate, new ReaderParameters { AssemblyResolver = this });
                _cache[name.Name] = a;
                return a;
            }
            throw new AssemblyResolutionException(name);
        }
        public void Dispose() { foreach (var a in _cache.Values) a.Dispose(); }
    }

    private static TypeReference TopLevel(TypeReference t)
    {
        while (t.DeclaringType != null) t = t.DeclaringType;
        return t;
    }

    private static int Main(string[] args)
    {
        if (args.Length != 4)
        {
            Console.Error.WriteLine("usage: Retarget.exe IN.dll OUT.dll API_DIR NETSTANDARD_FACADE");
            return 2;
        }
        var problems = new List<string>();
        var others = new List<AssemblyNameReference>();
        using (var resolver = new ApiResolver(args[2]))
        using (var facade = AssemblyDefinition.ReadAssembly(args[3]))
        using (var assembly = AssemblyDefinition.ReadAssembly(args[0],
                   new ReaderParameters { AssemblyResolver = resolver, InMemory = true }))
        {
            AssemblyNameDefinition standardName = facade.Name;
            if (standardName.Name != "netstandard" || standardName.Version != new Version(2, 0, 0, 0))
                throw new InvalidOperationException(args[3] + " is not netstandard 2.0.0.0");
            var standardTypes = new HashSet<string>(facade.MainModule.ExportedTypes
                .Where(e => !e.IsForwarder || e.DeclaringType == null).Select(e => e.FullName));
            foreach (TypeDefinition t in facade.MainModule.Types) standardTypes.Add(t.FullName);

            ModuleDefinition module = assembly.MainModule;
            var standard = new AssemblyNameReference("netstandard", standardName.Version) {
                PublicKeyToken = standardName.PublicKeyToken };
            // System.Memory is signed with the same (open) key as netstandard.
            var memory = new AssemblyNameReference("System.Memory", new Version(4, 0, 1, 1)) {
                PublicKeyToken = standardName.PublicKeyToken };

            foreach (AssemblyNameReference r in module.AssemblyReferences)
                if (!MonoFramework.Contains(r.Name)) others.Add(r);

            // 2. members, resolved against API_DIR before any scope changes.
            foreach (MemberReference m in module.GetMemberReferences())
            {
                TypeReference owner = TopLevel(m.DeclaringType.GetElementType());
                if (MemoryTypes.Contains(owner.FullName)) continue;
                var ownerScope = owner.Scope as AssemblyNameReference;
                if (ownerScope != null && !MonoFramework.Contains(ownerScope.Name)) continue;
                IMemberDefinition resolved = null;
                try
                {
                    var method = m as MethodReference;
                    var field = m as FieldReference;
                    resolved = method != null ? (IMemberDefinition)method.Resolve() : field != null ? field.Resolve() : null;
                }
                catch (AssemblyResolutionException) { }
                if (resolved == null)
                    problems.Add("not in .NET Framework 4.6.1's API: " + m.FullName);
            }

            // 1 and 3. types.
            bool usesMemory = false;
            foreach (TypeReference t in module.GetTypeReferences())
            {
                if (t.DeclaringType != null) continue;  // nested: scoped by its declaring type
                var scope = t.Scope as AssemblyNameReference;
                if (scope == null || !MonoFramework.Contains(scope.Name)) continue;
                if (MemoryTypes.Contains(t.FullName))
                {
                    t.Scope = memory;
                    usesMemory = true;
                }
                else if (standardTypes.Contains(t.FullName)) t.Scope = standard;
                else problems.Add("not in netstandard 2.0: " + t.FullName);
            }
            if (problems.Count != 0)
            {
                foreach (string p in problems.Distinct()) Console.Error.WriteLine("Retarget: " + p);
                return 1;
            }
            module.AssemblyReferences.Clear();
            module.AssemblyReferences.Add(standard);
            if (usesMemory) module.AssemblyReferences.Add(memory);
            foreach (AssemblyNameReference other in others) module.AssemblyReferences.Add(other);
            assembly.SecurityDeclarations.Clear();
            foreach (TypeDefinition t in module.GetTypes()) t.SecurityDeclarations.Clear();
            assembly.Write(args[1]);
        }
        using (var written = AssemblyDefinition.ReadAssembly(args[1]))
            foreach (AssemblyNameReference r in written.MainModule.AssemblyReferences)
                Console.WriteLine("reference: " + r.FullName);
        return 0;
    }
}
