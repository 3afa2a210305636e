// fdk_get_backend_info: which backends this library can run on this
// machine, and for each GPU whether it runs the machine code built for it
// or PTX the driver compiles. No Reconstructor needed.
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
        /// <summary>True when <see cref="Backend.Auto"/> would take CUDA (a driver, cuFFT and a GPU with code).</summary>
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

        private BackendInfo() { }

        /// <summary>Asks the native library (which initialises each GPU once).</summary>
        /// <exception cref="FdkException">The native call failed.</exception>
        public static unsafe BackendInfo Query()
        {
            var n = new FdkBackendInfoNative { struct_size = (uint)sizeof(FdkBackendInfoNative) };
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
    }
}
