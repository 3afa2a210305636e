// The structs of fdk.h, field for field, with the C field names. All are
// blittable (only primitive fields, fixed buffers and pointers), laid out
// sequentially with the platform's natural alignment exactly as a C compiler
// lays out the originals. The tests compare Marshal.SizeOf and the offset of
// every field with the values a C program compiled against fdk.h prints.
using System;
using System.Runtime.InteropServices;

namespace Fdk
{
    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkViewNative
    {
        public double gantry_angle_deg;
        public double sid;
        public double sdd;
        public double source_offset_x;
        public double source_offset_y;
        public double projection_offset_x;
        public double projection_offset_y;
        public double in_plane_angle_deg;
        public double out_of_plane_angle_deg;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkVolumeNative
    {
        public fixed int size[3];
        public fixed double spacing[3];
        public fixed double origin[3];
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkDetectorNative
    {
        public fixed int size[2];
        public fixed double spacing[2];
        public fixed double origin[2];
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkScanNative
    {
        public uint struct_size;
        public int kind;
        public int num_views;
        public double first_angle_deg;
        public double arc_deg;
        public FdkViewNative uniform;
        public FdkViewNative* views;
        public double* matrices;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkConfigNative
    {
        public const int MaxDevices = 16; // FDK_MAX_DEVICES

        public uint struct_size;
        public FdkVolumeNative volume;
        public FdkDetectorNative detector;
        public FdkScanNative scan;
        public int window;
        public double cutoff;
        public int short_scan;
        public int offset_detector;
        public double truncation_padding;
        public int backend;
        public int num_devices;
        public fixed int devices[MaxDevices];
        public ulong host_memory_budget;
        public ulong gpu_memory_budget;
        public int precision;
        public int num_threads;
        public int slab_thickness;
        public int outside_fov;
        public int store_policy;
        public double hann_cutoff_v;
        public int estimate_geometry;  // 0.7
        public int preview;            // 0.8
        public FdkVolumeNative preview_volume;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkSlabInfoNative
    {
        public uint struct_size;
        public int y_begin;
        public int y_end;
        public ulong byte_size;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkProgressNative
    {
        public uint struct_size;
        public int phase;
        public int views_pushed;
        public int views_total;
        public int slabs_done;
        public int slabs_total;
        public long backprojection_done;
        public long backprojection_total;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkStoreInfoNative
    {
        public uint struct_size;
        public int views_stored;
        public ulong raw_bytes;
        public ulong stored_bytes;
        public double ratio;
        public double rel_error_bound;
        public double abs_error_bound_factor;
        public int views_reduced;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkPlanInfoNative
    {
        public uint struct_size;
        public int backend;
        public int num_slabs;
        public int slab_thickness;
        public int short_scan;
        public int offset_detector;
        public int num_threads;
        public ulong host_memory_budget;
        public ulong gpu_memory_budget;
        public int outside_fov;
        public ulong voxels_outside_fov;
        public double half_fan_inferior;
        public double half_fan_superior;
        public int store_policy;
        public int store_fit;
        public ulong store_limit;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkTimingsNative
    {
        public uint struct_size;
        public double filter_seconds;
        public double store_seconds;
        public double backproject_seconds;
        public double upload_seconds;
        public double download_seconds;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkDeviceStatsNative
    {
        public uint struct_size;
        public int num_devices;
        public fixed int ordinal[FdkConfigNative.MaxDevices];
        public fixed double busy_seconds[FdkConfigNative.MaxDevices];
        public fixed int slabs_computed[FdkConfigNative.MaxDevices];
        public fixed int failed[FdkConfigNative.MaxDevices];
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkGeometryEstimateNative
    {
        public const int BasisBytes = 256;

        public uint struct_size;
        public double offset_u_mm;
        public double offset_u_pixels;
        public double tilt_deg;
        public double offset_sigma_pixels;
        public double tilt_sigma_deg;
        public double confidence;
        public int view_pairs;
        public int views_used;
        public int rows_used;
        public uint flags;
        public fixed byte basis[BasisBytes];
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct FdkPreviewInfoNative  // 0.8
    {
        public uint struct_size;
        public FdkVolumeNative volume;
        public int views;
        public int views_announced;
        public double coverage;
        public uint flags;
        public int on_gpu;
        public ulong memory_bytes;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct FdkPreviewSlicesNative  // 0.8
    {
        public uint struct_size;
        public fixed int at[3];
        public float* x_slice;
        public UIntPtr x_slice_bytes;
        public float* y_slice;
        public UIntPtr y_slice_bytes;
        public float* z_slice;
        public UIntPtr z_slice_bytes;
    }

    /// <summary>fdk_scan_kind.</summary>
    internal enum ScanKind
    {
        Uniform = 0,
        Views = 1,
        Matrices = 2,
    }
}
