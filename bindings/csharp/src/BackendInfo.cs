// fdk_get_backend_info: which backends this library can run on this
// machine, and for each GPU whether it runs the machine code built for it
// or PTX the driver compiles, and which CUDA version the NVIDIA driver
// supports against the one the GPU code needs. No Reconstructor needed; the
// GPU needs only the NVIDIA driver, no CUDA toolkit.
using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Runtime.InteropServices;

namespace Fdk
{
    /// <summary>fdk_gpu_code: what a GPU runs of this library.</summary>
    public enum GpuCode
    {
        /// <summary>No code in this build runs on the GPU (too old an architecture), or the query failed.</summary>
        None = 0,
        /// <summary>Machine code compiled for its architecture: the code the benchmarks measured.</summary>
        Sass = 1,
        /// <summary>PTX compiled by the driver at first use: a GPU newer than the build, untuned.</summary>
        Jit = 2,
    }

    /// <summary>One GPU in <see cref="BackendInfo.Devices"/>.</summary>
    public struct GpuCodeInfo
    {
        /// <summary>Compute capability as major * 10 + minor (90 for an H100/H200).</summary>
        public int ComputeCapability { get; private set; }
        /// <summary>What the GPU runs of this library.</summary>
        public GpuCode Code { get; private set; }
        /// <summary>For <see cref="GpuCode.Sass"/> the cubin's architecture, for <see cref="GpuCode.Jit"/> the PTX compiled.</summary>
        public int Architecture { get; private set; }

        internal GpuCodeInfo(int computeCapability, GpuCode code, int architecture) : this()
        {
            ComputeCapability = computeCapability;
            Code = code;
            Architecture = architecture;
        }
    }

    /// <summary>fdk_backend_info: the backends this library offers here.</summary>
    public sealed class BackendInfo
    {
        /// <summary>True when the native library has the CUDA backend.</summary>
        public bool CudaBuilt { get; private set; }
        /// <summary>True when <see cref="Backend.Auto"/> would take CUDA (a recent enough NVIDIA driver and a GPU with code).</summary>
        public bool CudaUsable { get; private set; }
        /// <summary>Architectures with machine code in the build (90 for sm_90), ascending.</summary>
        public ReadOnlyCollection<int> SassArchitectures { get; private set; }
        /// <summary>Newest PTX the build carries (120 for compute_120); 0 when none.</summary>
        public int PtxArchitecture { get; private set; }
        /// <summary>CUDA devices visible (only the first 16 are described in <see cref="Devices"/>).</summary>
        public int DeviceCount { get; private set; }
        /// <summary>What each visible GPU runs, by CUDA ordinal.</summary>
        public ReadOnlyCollection<GpuCodeInfo> Devices { get; private set; }
        /// <summary>When <see cref="CudaUsable"/> is false: why, in words; empty otherwise.</summary>
        public string Message { get; private set; }
        /// <summary>
        /// The CUDA version the NVIDIA driver supports, as cuDriverGetVersion reports it
        /// (13000 for CUDA 13.0); 0 when no driver could be loaded, or when the native
        /// library is older than 0.6 and does not report it.
        /// </summary>
        public int DriverVersion { get; private set; }
        /// <summary>
        /// The oldest such version the library's GPU code loads on (13000: CUDA 13.0, NVIDIA
        /// driver 580 or newer); 0 when the native library is older than 0.6.
        /// </summary>
        public int DriverRequired { get; private set; }
        /// <summary><see cref="DriverVersion"/> as "13.0"; empty when it is 0.</summary>
        public string DriverVersionText { get { return FormatCudaVersion(DriverVersion); } }
        /// <summary><see cref="DriverRequired"/> as "13.0"; empty when it is 0.</summary>
        public string DriverRequiredText { get { return FormatCudaVersion(DriverRequired); } }

        /// <summary>A CUDA version as cuDriverGetVersion writes it (13000, 12080) as "13.0", "12.8"; empty for 0 or less.</summary>
        public static string FormatCudaVersion(int version)
        {
            if (version <= 0) return "";
            return (version / 1000).ToString(System.Globalization.CultureInfo.InvariantCulture) + "." +
                   (version % 1000 / 10).ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        // fdk_backend_info up to message[256]: the struct_size a library older than 0.6
        // takes (it refuses any other).
        internal static readonly int SizeBefore06 = Marshal.OffsetOf(typeof(FdkBackendInfoNative), "driver_version").ToInt32();

        private BackendInfo() { }

        /// <summary>Asks the native library (which initialises each GPU once).</summary>
        /// <exception cref="FdkException">The native call failed.</exception>
        public static unsafe BackendInfo Query()
        {
            bool hasDriver = NativeMethods.fdk_version() >= 600;
            var n = new FdkBackendInfoNative {
                struct_size = (uint)(hasDriver ? sizeof(FdkBackendInfoNative) : SizeBefore06)
            };
            FdkException.Check(NativeMethods.fdk_get_backend_info(&n), null);
            var sass = new List<int>();
            for (int i = 0; i < Math.Min(Math.Max(n.num_sass, 0), FdkBackendInfoNative.MaxGpuArchs); ++i) sass.Add(n.sass[i]);
            var devices = new List<GpuCodeInfo>();
            for (int d = 0; d < Math.Min(Math.Max(n.num_devices, 0), FdkConfigNative.MaxDevices); ++d)
                devices.Add(new GpuCodeInfo(n.compute_capability[d], (GpuCode)n.code[d], n.code_arch[d]));
            return new BackendInfo {
                CudaBuilt = n.cuda_built != 0,
                CudaUsable = n.cuda_usable != 0,
                SassArchitectures = sass.AsReadOnly(),
                PtxArchitecture = n.ptx,
                DeviceCount = n.num_devices,
                Devices = devices.AsReadOnly(),
                Message = Marshal.PtrToStringAnsi((IntPtr)n.message) ?? "",
                DriverVersion = hasDriver ? n.driver_version : 0,
                DriverRequired = hasDriver ? n.driver_required : 0,
            };
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkBackendInfoNative
    {
        internal const int MaxGpuArchs = 16;  // FDK_MAX_GPU_ARCHS
        public uint struct_size;
        public int cuda_built;
        public int cuda_usable;
        public int num_sass;
        public fixed int sass[MaxGpuArchs];
        public int ptx;
        public int num_devices;
        public fixed int compute_capability[FdkConfigNative.MaxDevices];
        public fixed int code[FdkConfigNative.MaxDevices];
        public fixed int code_arch[FdkConfigNative.MaxDevices];
        public fixed byte message[256];
        // Added in 0.6.
        public int driver_version;
        public int driver_required;
    }
}
