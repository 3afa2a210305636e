// The binding's public type names must not clash with the BCL namespaces a
// C# application imports beside Fdk (Fdk.Switch once collided with
// System.Diagnostics.Switch in any file importing both).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class NamingTests
    {
        private static readonly string[] Imported = {
            "System", "System.IO", "System.Diagnostics", "System.Threading", "System.Threading.Tasks",
            "System.Collections.Generic", "System.Linq", "System.Buffers", "System.Runtime.InteropServices",
        };

        [Test]
        public void NoPublicTypeSharesANameWithTheCommonlyImportedBclNamespaces()
        {
            // The BCL as Mono has it: mscorlib, System, System.Core (a superset
            // of what those namespaces hold in netstandard 2.0).
            var bcl = new HashSet<string>();
            foreach (Assembly a in new[] { typeof(object).Assembly, typeof(System.Diagnostics.Switch).Assembly,
                                           typeof(Enumerable).Assembly })
                foreach (Type t in a.GetExportedTypes())
                    if (Array.IndexOf(Imported, t.Namespace) >= 0) bcl.Add(Strip(t.Name));

            Type[] ours = typeof(Reconstructor).Assembly.GetExportedTypes();
            Assert.Greater(ours.Length, 20);
            string[] clashes = ours.Where(t => bcl.Contains(Strip(t.Name))).Select(t => t.FullName).ToArray();
            Assert.IsEmpty(clashes, "clash with the BCL: " + string.Join(", ", clashes));
            Assert.IsTrue(bcl.Contains("Switch"), "the check would not have seen the old clash");
        }

        private static string Strip(string name)
        {
            int tick = name.IndexOf('`');
            return tick < 0 ? name : name.Substring(0, tick);
        }
    }
}
