// The binding's structs and constants against the C compiler's view of
// fdk.h (tests/native/fdk_layout.c).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class LayoutTests
    {
        private static readonly Dictionary<string, Type> Structs = new Dictionary<string, Type> {
            { "fdk_view", typeof(FdkViewNative) },
            { "fdk_volume", typeof(FdkVolumeNative) },
            { "fdk_detector", typeof(FdkDetectorNative) },
            { "fdk_scan", typeof(FdkScanNative) },
            { "fdk_config", typeof(FdkConfigNative) },
            { "fdk_slab_info", typeof(FdkSlabInfoNative) },
            { "fdk_progress", typeof(FdkProgressNative) },
            { "fdk_store_info", typeof(FdkStoreInfoNative) },
            { "fdk_plan_info", typeof(FdkPlanInfoNative) },
            { "fdk_timings", typeof(FdkTimingsNative) },
            { "fdk_device_stats", typeof(FdkDeviceStatsNative) },
            { "fdk_backend_info", typeof(FdkBackendInfoNative) },
            { "fdk_geometry_estimate", typeof(FdkGeometryEstimateNative) },
            { "fdk_preview_info", typeof(FdkPreviewInfoNative) },
            { "fdk_preview_slices", typeof(FdkPreviewSlicesNative) },
        };

        private List<string[]> _facts;

        [TestFixtureSetUp]
        public void ReadLayout()
        {
            _facts = new List<string[]>();
            foreach (string line in NativeTools.Run("fdk_layout").Split('\n'))
                if (line.Trim().Length > 0) _facts.Add(line.Trim().Split(' '));
            Assert.Greater(_facts.Count, 100, "fdk_layout printed too little");
        }

        private static int Int(string s) { return int.Parse(s, CultureInfo.InvariantCulture); }

        private static unsafe int UnsafeSizeOf(Type t)
        {
            // sizeof(T) for the types above, as the C# compiler sees it.
            if (t == typeof(FdkViewNative)) return sizeof(FdkViewNative);
            if (t == typeof(FdkVolumeNative)) return sizeof(FdkVolumeNative);
            if (t == typeof(FdkDetectorNative)) return sizeof(FdkDetectorNative);
            if (t == typeof(FdkScanNative)) return sizeof(FdkScanNative);
            if (t == typeof(FdkConfigNative)) return sizeof(FdkConfigNative);
            if (t == typeof(FdkSlabInfoNative)) return sizeof(FdkSlabInfoNative);
            if (t == typeof(FdkProgressNative)) return sizeof(FdkProgressNative);
            if (t == typeof(FdkStoreInfoNative)) return sizeof(FdkStoreInfoNative);
            if (t == typeof(FdkPlanInfoNative)) return sizeof(FdkPlanInfoNative);
            if (t == typeof(FdkTimingsNative)) return sizeof(FdkTimingsNative);
            if (t == typeof(FdkDeviceStatsNative)) return sizeof(FdkDeviceStatsNative);
            if (t == typeof(FdkBackendInfoNative)) return sizeof(FdkBackendInfoNative);
            if (t == typeof(FdkGeometryEstimateNative)) return sizeof(FdkGeometryEstimateNative);
            if (t == typeof(FdkPreviewInfoNative)) return sizeof(FdkPreviewInfoNative);
            if (t == typeof(FdkPreviewSlicesNative)) return sizeof(FdkPreviewSlicesNative);
            throw new ArgumentException(t.Name);
        }

        [Test]
        public void StructSizesEqualTheCSizes()
        {
            int checkedCount = 0;
            foreach (string[] f in _facts)
            {
                if (f[0] != "sizeof") continue;
                Assert.IsTrue(Structs.ContainsKey(f[1]), "no C# mirror of " + f[1]);
                Type t = Structs[f[1]];
                Assert.AreEqual(Int(f[2]), Marshal.SizeOf(t), "Marshal.SizeOf(" + t.Name + ") vs sizeof(" + f[1] + ")");
                Assert.AreEqual(Int(f[2]), UnsafeSizeOf(t), "sizeof(" + t.Name + ") vs sizeof(" + f[1] + ")");
                ++checkedCount;
            }
            Assert.AreEqual(Structs.Count, checkedCount);
        }

        [Test]
        public void EveryFieldSitsAtTheCOffset()
        {
            var seen = new Dictionary<string, int>();
            foreach (string[] f in _facts)
            {
                if (f[0] != "offsetof") continue;
                Type t = Structs[f[1]];
                FieldInfo field = t.GetField(f[2], BindingFlags.Instance | BindingFlags.Public);
                Assert.IsNotNull(field, t.Name + " has no field " + f[2]);
                Assert.AreEqual(Int(f[3]), Marshal.OffsetOf(t, f[2]).ToInt32(),
                                f[1] + "." + f[2] + " offset");
                int n;
                seen.TryGetValue(f[1], out n);
                seen[f[1]] = n + 1;
            }
            // No extra C# field either.
            foreach (KeyValuePair<string, Type> s in Structs)
            {
                int fields = s.Value.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic).Length;
                Assert.AreEqual(seen[s.Key], fields, s.Value.Name + " fields vs " + s.Key);
            }
        }

        [Test]
        public void BackendInfoEndsWithTheDriverFieldsOf06()
        {
            // Appended in 0.6 after message[256]; a library older than 0.6 gets the
            // struct_size that ends before them (BackendInfo.SizeBefore06).
            var offsets = new Dictionary<string, int>();
            int size = -1;
            foreach (string[] f in _facts)
            {
                if (f[0] == "offsetof" && f[1] == "fdk_backend_info") offsets[f[2]] = Int(f[3]);
                if (f[0] == "sizeof" && f[1] == "fdk_backend_info") size = Int(f[2]);
            }
            Assert.IsTrue(offsets.ContainsKey("driver_version") && offsets.ContainsKey("driver_required"),
                          "fdk_layout does not list fdk_backend_info's 0.6 fields");
            Assert.AreEqual(offsets["message"] + 256, offsets["driver_version"]);
            Assert.AreEqual(offsets["driver_version"] + 4, offsets["driver_required"]);
            Assert.AreEqual(offsets["driver_required"] + 4, size);
            Type t = typeof(FdkBackendInfoNative);
            Assert.AreEqual(offsets["driver_version"], Marshal.OffsetOf(t, "driver_version").ToInt32());
            Assert.AreEqual(offsets["driver_required"], Marshal.OffsetOf(t, "driver_required").ToInt32());
            Assert.AreEqual(offsets["driver_version"], BackendInfo.SizeBefore06);
        }

        [Test]
        public void StructsAreBlittable()
        {
            foreach (Type t in Structs.Values)
            {
                // Pinning fails for a type the marshaller would have to copy.
                Array one = Array.CreateInstance(t, 1);
                GCHandle h = GCHandle.Alloc(one, GCHandleType.Pinned);
                h.Free();
            }
        }

        /// <summary>C# member name to the C enumerator: RamLak -> RAM_LAK.</summary>
        private static string Snake(string name)
        {
            var sb = new StringBuilder();
            for (int i = 0; i < name.Length; ++i)
            {
                char c = name[i];
                if (i > 0 && char.IsUpper(c) && !char.IsUpper(name[i - 1])) sb.Append('_');
                sb.Append(char.ToUpperInvariant(c));
            }
            return sb.ToString();
        }

        [Test]
        public void EnumValuesEqualTheCValues()
        {
            var c = new Dictionary<string, int>();
            foreach (string[] f in _facts)
                if (f[0] == "enum") c[f[1]] = Int(f[2]);

            var expected = new Dictionary<string, int>();
            foreach (FdkStatus s in Enum.GetValues(typeof(FdkStatus)))
                expected[s == FdkStatus.Ok ? "FDK_OK" : "FDK_ERROR_" + Snake(s.ToString())] = (int)s;
            foreach (FilterWindow w in Enum.GetValues(typeof(FilterWindow)))
                expected["FDK_WINDOW_" + Snake(w.ToString())] = (int)w;
            foreach (Activation w in Enum.GetValues(typeof(Activation)))
                expected["FDK_" + Snake(w.ToString())] = (int)w;
            foreach (Backend b in Enum.GetValues(typeof(Backend)))
                expected["FDK_BACKEND_" + Snake(b.ToString())] = (int)b;
            foreach (Precision p in Enum.GetValues(typeof(Precision)))
                expected["FDK_PRECISION_" + Snake(p.ToString())] = (int)p;
            foreach (Phase p in Enum.GetValues(typeof(Phase)))
                expected["FDK_PHASE_" + Snake(p.ToString())] = (int)p;
            foreach (OutsideFieldOfView o in Enum.GetValues(typeof(OutsideFieldOfView)))
                expected["FDK_OUTSIDE_FOV_" + Snake(o.ToString())] = (int)o;
            foreach (StorePolicy p in Enum.GetValues(typeof(StorePolicy)))
                expected["FDK_STORE_" + Snake(p.ToString())] = (int)p;
            foreach (StoreFit f in Enum.GetValues(typeof(StoreFit)))
                expected["FDK_STORE_" + Snake(f.ToString())] = (int)f;
            foreach (ViewStateKind v in Enum.GetValues(typeof(ViewStateKind)))
                expected["FDK_VIEW_" + Snake(v.ToString())] = (int)v;
            foreach (ScanKind k in Enum.GetValues(typeof(ScanKind)))
                expected["FDK_SCAN_" + Snake(k.ToString())] = (int)k;
            foreach (GpuCode g in Enum.GetValues(typeof(GpuCode)))
                expected["FDK_GPU_CODE_" + Snake(g.ToString())] = (int)g;
            foreach (GeometryEstimateFlags g in Enum.GetValues(typeof(GeometryEstimateFlags)))
                if (g != GeometryEstimateFlags.None) expected["FDK_ESTIMATE_" + Snake(g.ToString())] = (int)g;
            foreach (PreviewFlags p in Enum.GetValues(typeof(PreviewFlags)))
                if (p != PreviewFlags.None) expected["FDK_PREVIEW_" + Snake(p.ToString())] = (int)p;
            expected["FDK_MAX_DEVICES"] = FdkConfigNative.MaxDevices;
            expected["FDK_MAX_GPU_ARCHS"] = FdkBackendInfoNative.MaxGpuArchs;
            expected["FDK_VERSION_MAJOR"] = Reconstructor.BindingVersionMajor;

            foreach (KeyValuePair<string, int> e in expected)
            {
                Assert.IsTrue(c.ContainsKey(e.Key), "fdk.h has no " + e.Key);
                Assert.AreEqual(c[e.Key], e.Value, e.Key);
            }
            foreach (string name in c.Keys)
                Assert.IsTrue(expected.ContainsKey(name), "the binding has no counterpart of " + name);
        }

        [Test]
        public unsafe void DefaultsEqualThoseOfFdkConfigInit()
        {
            // fdk_config_init on a buffer far larger than the struct (so that a
            // size disagreement cannot corrupt memory), then field by field
            // against what the binding sends for default settings.
            IntPtr buffer = Marshal.AllocHGlobal(4096);
            try
            {
                Assert.AreEqual(buffer, NativeMethods.fdk_config_init_sized(buffer, (UIntPtr)sizeof(FdkConfigNative)));
                FdkConfigNative init = *(FdkConfigNative*)buffer;
                var settings = new ReconstructionSettings {
                    Volume = new Volume(), Detector = new Detector(),
                    Scan = Scan.Uniform(0, 0, 0),
                };
                FdkConfigNative ours = Reconstructor.BuildConfig(settings);
                Assert.AreEqual(init.struct_size, ours.struct_size);
                Assert.AreEqual(init.scan.struct_size, ours.scan.struct_size);
                Assert.AreEqual(init.scan.kind, ours.scan.kind);
                Assert.AreEqual(init.scan.arc_deg, ours.scan.arc_deg);
                Assert.AreEqual(init.scan.first_angle_deg, ours.scan.first_angle_deg);
                Assert.AreEqual(init.window, ours.window);
                Assert.AreEqual(init.cutoff, ours.cutoff);
                Assert.AreEqual(init.short_scan, ours.short_scan);
                Assert.AreEqual(init.offset_detector, ours.offset_detector);
                Assert.AreEqual(init.truncation_padding, ours.truncation_padding);
                Assert.AreEqual(init.backend, ours.backend);
                Assert.AreEqual(init.num_devices, ours.num_devices);
                Assert.AreEqual(init.host_memory_budget, ours.host_memory_budget);
                Assert.AreEqual(init.gpu_memory_budget, ours.gpu_memory_budget);
                Assert.AreEqual(init.precision, ours.precision);
                Assert.AreEqual(init.num_threads, ours.num_threads);
                Assert.AreEqual(init.slab_thickness, ours.slab_thickness);
                Assert.AreEqual(init.outside_fov, ours.outside_fov);
                Assert.AreEqual(init.store_policy, ours.store_policy);
                Assert.AreEqual(init.hann_cutoff_v, ours.hann_cutoff_v);
                Assert.AreEqual(init.estimate_geometry, ours.estimate_geometry);
                Assert.AreEqual(init.preview, ours.preview);
                for (int a = 0; a < 3; ++a)
                {
                    // All sizes 0: the default grid.
                    Assert.AreEqual(init.preview_volume.size[a], ours.preview_volume.size[a]);
                    Assert.AreEqual(init.preview_volume.spacing[a], ours.preview_volume.spacing[a]);
                    Assert.AreEqual(init.preview_volume.origin[a], ours.preview_volume.origin[a]);
                }
            }
            finally
            {
                Marshal.FreeHGlobal(buffer);
            }
        }

        [Test]
        public unsafe void GeometryEstimateInitSetsOurSize()
        {
            var e = new FdkGeometryEstimateNative { confidence = 7.0 };
            Assert.IsTrue(NativeMethods.fdk_geometry_estimate_init(&e) == &e);
            Assert.AreEqual((uint)sizeof(FdkGeometryEstimateNative), e.struct_size);
            Assert.AreEqual(0.0, e.confidence);
            Assert.AreEqual(0, e.basis[0]);
        }

        [Test]
        public unsafe void PreviewInfoInitSetsOurSize()
        {
            var info = new FdkPreviewInfoNative { views = 7, coverage = 0.5 };
            Assert.IsTrue(NativeMethods.fdk_preview_info_init(&info) == &info);
            Assert.AreEqual((uint)sizeof(FdkPreviewInfoNative), info.struct_size);
            Assert.AreEqual(0, info.views);
            Assert.AreEqual(0.0, info.coverage);
        }

        [Test]
        public void VersionsAgree()
        {
            string native = Reconstructor.NativeVersion;
            int number = Reconstructor.NativeVersionNumber;
            string[] parts = native.Split('.');
            Assert.AreEqual(3, parts.Length, native);
            Assert.AreEqual(Int(parts[0]) * 10000 + Int(parts[1]) * 100 + Int(parts[2]), number);
            Assert.AreEqual(Reconstructor.BindingVersionMajor, number / 10000);
            // The assembly is versioned with the library it was built with.
            Assert.AreEqual(native, typeof(Reconstructor).Assembly.GetName().Version.ToString(3));
        }
    }
}
