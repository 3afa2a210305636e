// What the Reconstructor reports: the read-only snapshots of fdk.h's info
// structs (slab, progress, store, plan, view state, timings, devices).
using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;

namespace Fdk
{
    /// <summary>A slab of y planes [YBegin, YEnd): x fastest, then z, then y.</summary>
    public struct SlabInfo
    {
        /// <summary>The slab's index, in [0, SlabCount).</summary>
        public int Index { get; private set; }
        /// <summary>First y plane of the slab.</summary>
        public int YBegin { get; private set; }
        /// <summary>One past the last y plane of the slab.</summary>
        public int YEnd { get; private set; }
        /// <summary>Bytes of the slab: 4 * SizeX * SizeZ * Planes.</summary>
        public long ByteSize { get; private set; }
        /// <summary>y planes in the slab (YEnd - YBegin).</summary>
        public int Planes { get { return YEnd - YBegin; } }
        /// <summary>Floats in the slab (ByteSize / 4).</summary>
        public long FloatCount { get { return ByteSize / sizeof(float); } }

        internal SlabInfo(int index, FdkSlabInfoNative n) : this()
        {
            Index = index;
            YBegin = n.y_begin;
            YEnd = n.y_end;
            ByteSize = (long)n.byte_size;
        }
    }

    /// <summary>A snapshot of fdk_progress.</summary>
    public struct ReconstructionProgress
    {
        /// <summary>Where the reconstruction stands.</summary>
        public Phase Phase { get; private set; }
        /// <summary>Projections pushed so far.</summary>
        public int ViewsPushed { get; private set; }
        /// <summary>Projections announced by the scan.</summary>
        public int ViewsTotal { get; private set; }
        /// <summary>Slabs computed at least once.</summary>
        public int SlabsDone { get; private set; }
        /// <summary>Slabs in the plan.</summary>
        public int SlabsTotal { get; private set; }
        /// <summary>Backprojection work done, in view x y-plane units: it moves while a slab
        /// is computed, never goes back, and reaches <see cref="BackprojectionTotal"/>.</summary>
        public long BackprojectionDone { get; private set; }
        /// <summary>Views (announced until Finish, arrived after) x the volume's y planes.</summary>
        public long BackprojectionTotal { get; private set; }

        internal ReconstructionProgress(FdkProgressNative n) : this()
        {
            Phase = (Phase)n.phase;
            ViewsPushed = n.views_pushed;
            ViewsTotal = n.views_total;
            SlabsDone = n.slabs_done;
            SlabsTotal = n.slabs_total;
            BackprojectionDone = n.backprojection_done;
            BackprojectionTotal = n.backprojection_total;
        }

        /// <summary>"Phase: views pushed/total, slabs done/total".</summary>
        public override string ToString()
        {
            return string.Format("{0}: views {1}/{2}, slabs {3}/{4}", Phase, ViewsPushed,
                                 ViewsTotal, SlabsDone, SlabsTotal);
        }
    }

    /// <summary>The data of <see cref="Reconstructor.Progress"/>.</summary>
    public sealed class ProgressEventArgs : EventArgs
    {
        /// <summary>The progress when the event was raised.</summary>
        public ReconstructionProgress Progress { get; private set; }
        /// <summary>Event data carrying <paramref name="progress"/>.</summary>
        public ProgressEventArgs(ReconstructionProgress progress) { Progress = progress; }
    }

    /// <summary>fdk_store_info: the compressed projection store.</summary>
    public struct StoreInfo
    {
        /// <summary>Views in the store now (pushed views may still be on their way until Finish has returned).</summary>
        public int ViewsStored { get; private set; }
        /// <summary>The filtered projections' size as float32.</summary>
        public long RawBytes { get; private set; }
        /// <summary>Bytes they take in host memory: coded when the scan would not fit its budget uncoded, else as they are.</summary>
        public long StoredBytes { get; private set; }
        /// <summary>RawBytes / StoredBytes (0 when empty).</summary>
        public double Ratio { get; private set; }
        /// <summary>float16 storage: |stored - exact| &lt;= RelativeErrorBound * |exact| + AbsoluteErrorBoundFactor * (largest |value| of the row band); 0 for float32.</summary>
        public double RelativeErrorBound { get; private set; }
        /// <summary>The absolute part of the float16 bound (see <see cref="RelativeErrorBound"/>); 0 for float32.</summary>
        public double AbsoluteErrorBoundFactor { get; private set; }
        /// <summary>Views stored as float16 by <see cref="Fdk.StorePolicy.ReducePrecision"/>
        /// (the bounds above then hold for them; float32 views are exact).</summary>
        public int ViewsReduced { get; private set; }

        internal StoreInfo(FdkStoreInfoNative n) : this()
        {
            ViewsStored = n.views_stored;
            RawBytes = (long)n.raw_bytes;
            StoredBytes = (long)n.stored_bytes;
            Ratio = n.ratio;
            RelativeErrorBound = n.rel_error_bound;
            AbsoluteErrorBoundFactor = n.abs_error_bound_factor;
            ViewsReduced = n.views_reduced;
        }
    }

    /// <summary>fdk_plan_info: what fdk_create decided.</summary>
    public struct PlanInfo
    {
        /// <summary>The backend in use (Cpu or Cuda, never Auto).</summary>
        public Backend Backend { get; private set; }
        /// <summary>Slabs in the plan.</summary>
        public int SlabCount { get; private set; }
        /// <summary>y planes of every slab but maybe the last.</summary>
        public int SlabThickness { get; private set; }
        /// <summary>True when Parker weights are applied.</summary>
        public bool ShortScan { get; private set; }
        /// <summary>True when half-fan weights are applied.</summary>
        public bool OffsetDetector { get; private set; }
        /// <summary>CPU threads in use.</summary>
        public int Threads { get; private set; }
        /// <summary>The effective host budget, in bytes.</summary>
        public long HostMemoryBudget { get; private set; }
        /// <summary>The effective budget per GPU, in bytes.</summary>
        public long GpuMemoryBudget { get; private set; }
        /// <summary>The treatment of voxels outside the field of view in use.</summary>
        public OutsideFieldOfView OutsideFieldOfView { get; private set; }
        /// <summary>Voxels outside the field of view of the announced views.</summary>
        public long VoxelsOutsideFieldOfView { get; private set; }
        /// <summary>The half-fan rule's figures: the signed distances from the rotation axis of
        /// the rays through the detector's first and last pixel centres (smallest over the views).</summary>
        public double HalfFanInferior { get; private set; }
        /// <summary>The half-fan rule's figure for the detector's last pixel centre (see <see cref="HalfFanInferior"/>).</summary>
        public double HalfFanSuperior { get; private set; }
        /// <summary>The store policy in use.</summary>
        public StorePolicy StorePolicy { get; private set; }
        /// <summary>Whether the announced views fit the store.</summary>
        public StoreFit StoreFit { get; private set; }
        /// <summary>Bytes the compressed store may hold: the host budget less the
        /// slabs' reserve and the per-view bookkeeping.</summary>
        public long StoreLimit { get; private set; }

        internal PlanInfo(FdkPlanInfoNative n) : this()
        {
            Backend = (Backend)n.backend;
            SlabCount = n.num_slabs;
            SlabThickness = n.slab_thickness;
            ShortScan = n.short_scan != 0;
            OffsetDetector = n.offset_detector != 0;
            Threads = n.num_threads;
            HostMemoryBudget = (long)n.host_memory_budget;
            GpuMemoryBudget = (long)n.gpu_memory_budget;
            OutsideFieldOfView = (OutsideFieldOfView)n.outside_fov;
            VoxelsOutsideFieldOfView = (long)n.voxels_outside_fov;
            HalfFanInferior = n.half_fan_inferior;
            HalfFanSuperior = n.half_fan_superior;
            StorePolicy = (StorePolicy)n.store_policy;
            StoreFit = (StoreFit)n.store_fit;
            StoreLimit = (long)n.store_limit;
        }
    }

    /// <summary>fdk_get_view_state: where one view stands.</summary>
    public struct ViewState
    {
        /// <summary>The view's index.</summary>
        public int Index { get; private set; }
        /// <summary>Absent, Pending, Stored or Failed.</summary>
        public ViewStateKind State { get; private set; }
        /// <summary>For a Failed view, the status that lost it; else Ok.</summary>
        public FdkStatus Failure { get; private set; }

        internal ViewState(int index, int state, int failure) : this()
        {
            Index = index;
            State = (ViewStateKind)state;
            Failure = (FdkStatus)failure;
        }

        /// <summary>"view N: State" (and the failure of a Failed view).</summary>
        public override string ToString()
        {
            return State == ViewStateKind.Failed
                ? string.Format("view {0}: {1} ({2})", Index, State, Failure)
                : string.Format("view {0}: {1}", Index, State);
        }
    }

    /// <summary>fdk_timings: where the time went since construction, in seconds.</summary>
    public struct Timings
    {
        /// <summary>Weighting and ramp filter, uploads included (wall time).</summary>
        public double FilterSeconds { get; private set; }
        /// <summary>Compression into the store (wall time).</summary>
        public double StoreSeconds { get; private set; }
        /// <summary>CUDA: kernel time from device events; CPU: wall time of the backprojector.</summary>
        public double BackprojectSeconds { get; private set; }
        /// <summary>CUDA streaming: row-window decompression and upload outside kernels (wall time).</summary>
        public double UploadSeconds { get; private set; }
        /// <summary>Slabs copied to host memory (wall time).</summary>
        public double DownloadSeconds { get; private set; }

        internal Timings(FdkTimingsNative n) : this()
        {
            FilterSeconds = n.filter_seconds;
            StoreSeconds = n.store_seconds;
            BackprojectSeconds = n.backproject_seconds;
            UploadSeconds = n.upload_seconds;
            DownloadSeconds = n.download_seconds;
        }
    }

    /// <summary>One GPU's figures in <see cref="DeviceStats"/>.</summary>
    public struct GpuStats
    {
        /// <summary>CUDA device ordinal.</summary>
        public int Ordinal { get; private set; }
        /// <summary>Backprojection kernel time (device events), in seconds.</summary>
        public double BusySeconds { get; private set; }
        /// <summary>Slab computations from the store (streaming), repeats included.</summary>
        public int SlabsComputed { get; private set; }
        /// <summary>True once the GPU failed and its work went to the others.</summary>
        public bool Failed { get; private set; }

        internal GpuStats(int ordinal, double busySeconds, int slabsComputed, bool failed) : this()
        {
            Ordinal = ordinal;
            BusySeconds = busySeconds;
            SlabsComputed = slabsComputed;
            Failed = failed;
        }
    }

    /// <summary>fdk_device_stats: the GPUs in use, in the order the reconstruction uses them (none on the CPU backend).</summary>
    public sealed class DeviceStats
    {
        /// <summary>One entry per GPU in use; empty on the CPU backend.</summary>
        public ReadOnlyCollection<GpuStats> Devices { get; private set; }

        internal unsafe DeviceStats(FdkDeviceStatsNative n)
        {
            int count = Math.Max(0, Math.Min(n.num_devices, FdkConfigNative.MaxDevices));
            var list = new List<GpuStats>(count);
            for (int i = 0; i < count; ++i)
                list.Add(new GpuStats(n.ordinal[i], n.busy_seconds[i], n.slabs_computed[i], n.failed[i] != 0));
            Devices = list.AsReadOnly();
        }
    }
}
