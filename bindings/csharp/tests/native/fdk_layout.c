/*
 * fdk_layout: prints the layout of every struct of fdk.h and the value of
 * every enumerator, one fact per line, for the C# binding's tests to compare
 * with Marshal.SizeOf / Marshal.OffsetOf and its enums:
 *
 *   sizeof <struct> <bytes>
 *   offsetof <struct> <field> <bytes>
 *   enum <NAME> <value>
 *
 * Only needs the header (no libfdk). Every field of every struct is listed:
 * a field added to fdk.h but not here shows up as a size mismatch.
 */
#include <fdk/fdk.h>

#include <stddef.h>
#include <stdio.h>

#define SIZE(type) printf("sizeof %s %u\n", #type, (unsigned)sizeof(type))
#define FIELD(type, field) \
  printf("offsetof %s %s %u\n", #type, #field, (unsigned)offsetof(type, field))
#define ENUM(name) printf("enum %s %d\n", #name, (int)(name))

int main(void) {
  SIZE(fdk_view);
  FIELD(fdk_view, gantry_angle_deg);
  FIELD(fdk_view, sid);
  FIELD(fdk_view, sdd);
  FIELD(fdk_view, source_offset_x);
  FIELD(fdk_view, source_offset_y);
  FIELD(fdk_view, projection_offset_x);
  FIELD(fdk_view, projection_offset_y);
  FIELD(fdk_view, in_plane_angle_deg);
  FIELD(fdk_view, out_of_plane_angle_deg);

  SIZE(fdk_volume);
  FIELD(fdk_volume, size);
  FIELD(fdk_volume, spacing);
  FIELD(fdk_volume, origin);

  SIZE(fdk_detector);
  FIELD(fdk_detector, size);
  FIELD(fdk_detector, spacing);
  FIELD(fdk_detector, origin);

  SIZE(fdk_scan);
  FIELD(fdk_scan, struct_size);
  FIELD(fdk_scan, kind);
  FIELD(fdk_scan, num_views);
  FIELD(fdk_scan, first_angle_deg);
  FIELD(fdk_scan, arc_deg);
  FIELD(fdk_scan, uniform);
  FIELD(fdk_scan, views);
  FIELD(fdk_scan, matrices);

  SIZE(fdk_config);
  FIELD(fdk_config, struct_size);
  FIELD(fdk_config, volume);
  FIELD(fdk_config, detector);
  FIELD(fdk_config, scan);
  FIELD(fdk_config, window);
  FIELD(fdk_config, cutoff);
  FIELD(fdk_config, short_scan);
  FIELD(fdk_config, offset_detector);
  FIELD(fdk_config, truncation_padding);
  FIELD(fdk_config, backend);
  FIELD(fdk_config, num_devices);
  FIELD(fdk_config, devices);
  FIELD(fdk_config, host_memory_budget);
  FIELD(fdk_config, gpu_memory_budget);
  FIELD(fdk_config, precision);
  FIELD(fdk_config, num_threads);
  FIELD(fdk_config, slab_thickness);
  FIELD(fdk_config, outside_fov);
  FIELD(fdk_config, store_policy);
  FIELD(fdk_config, hann_cutoff_v);
  FIELD(fdk_config, estimate_geometry);
  FIELD(fdk_config, preview);
  FIELD(fdk_config, preview_volume);

  SIZE(fdk_slab_info);
  FIELD(fdk_slab_info, struct_size);
  FIELD(fdk_slab_info, y_begin);
  FIELD(fdk_slab_info, y_end);
  FIELD(fdk_slab_info, byte_size);

  SIZE(fdk_progress);
  FIELD(fdk_progress, struct_size);
  FIELD(fdk_progress, phase);
  FIELD(fdk_progress, views_pushed);
  FIELD(fdk_progress, views_total);
  FIELD(fdk_progress, slabs_done);
  FIELD(fdk_progress, slabs_total);
  FIELD(fdk_progress, backprojection_done);
  FIELD(fdk_progress, backprojection_total);

  SIZE(fdk_store_info);
  FIELD(fdk_store_info, struct_size);
  FIELD(fdk_store_info, views_stored);
  FIELD(fdk_store_info, raw_bytes);
  FIELD(fdk_store_info, stored_bytes);
  FIELD(fdk_store_info, ratio);
  FIELD(fdk_store_info, rel_error_bound);
  FIELD(fdk_store_info, abs_error_bound_factor);
  FIELD(fdk_store_info, views_reduced);

  SIZE(fdk_plan_info);
  FIELD(fdk_plan_info, struct_size);
  FIELD(fdk_plan_info, backend);
  FIELD(fdk_plan_info, num_slabs);
  FIELD(fdk_plan_info, slab_thickness);
  FIELD(fdk_plan_info, short_scan);
  FIELD(fdk_plan_info, offset_detector);
  FIELD(fdk_plan_info, num_threads);
  FIELD(fdk_plan_info, host_memory_budget);
  FIELD(fdk_plan_info, gpu_memory_budget);
  FIELD(fdk_plan_info, outside_fov);
  FIELD(fdk_plan_info, voxels_outside_fov);
  FIELD(fdk_plan_info, half_fan_inferior);
  FIELD(fdk_plan_info, half_fan_superior);
  FIELD(fdk_plan_info, store_policy);
  FIELD(fdk_plan_info, store_fit);
  FIELD(fdk_plan_info, store_limit);

  SIZE(fdk_timings);
  FIELD(fdk_timings, struct_size);
  FIELD(fdk_timings, filter_seconds);
  FIELD(fdk_timings, store_seconds);
  FIELD(fdk_timings, backproject_seconds);
  FIELD(fdk_timings, upload_seconds);
  FIELD(fdk_timings, download_seconds);

  SIZE(fdk_device_stats);
  FIELD(fdk_device_stats, struct_size);
  FIELD(fdk_device_stats, num_devices);
  FIELD(fdk_device_stats, ordinal);
  FIELD(fdk_device_stats, busy_seconds);
  FIELD(fdk_device_stats, slabs_computed);
  FIELD(fdk_device_stats, failed);

  SIZE(fdk_backend_info);
  FIELD(fdk_backend_info, struct_size);
  FIELD(fdk_backend_info, cuda_built);
  FIELD(fdk_backend_info, cuda_usable);
  FIELD(fdk_backend_info, num_sass);
  FIELD(fdk_backend_info, sass);
  FIELD(fdk_backend_info, ptx);
  FIELD(fdk_backend_info, num_devices);
  FIELD(fdk_backend_info, compute_capability);
  FIELD(fdk_backend_info, code);
  FIELD(fdk_backend_info, code_arch);
  FIELD(fdk_backend_info, message);
  FIELD(fdk_backend_info, driver_version);
  FIELD(fdk_backend_info, driver_required);

  SIZE(fdk_geometry_estimate);
  FIELD(fdk_geometry_estimate, struct_size);
  FIELD(fdk_geometry_estimate, offset_u_mm);
  FIELD(fdk_geometry_estimate, offset_u_pixels);
  FIELD(fdk_geometry_estimate, tilt_deg);
  FIELD(fdk_geometry_estimate, offset_sigma_pixels);
  FIELD(fdk_geometry_estimate, tilt_sigma_deg);
  FIELD(fdk_geometry_estimate, confidence);
  FIELD(fdk_geometry_estimate, view_pairs);
  FIELD(fdk_geometry_estimate, views_used);
  FIELD(fdk_geometry_estimate, rows_used);
  FIELD(fdk_geometry_estimate, flags);
  FIELD(fdk_geometry_estimate, basis);

  SIZE(fdk_preview_info);
  FIELD(fdk_preview_info, struct_size);
  FIELD(fdk_preview_info, volume);
  FIELD(fdk_preview_info, views);
  FIELD(fdk_preview_info, views_announced);
  FIELD(fdk_preview_info, coverage);
  FIELD(fdk_preview_info, flags);
  FIELD(fdk_preview_info, on_gpu);
  FIELD(fdk_preview_info, memory_bytes);

  SIZE(fdk_preview_slices);
  FIELD(fdk_preview_slices, struct_size);
  FIELD(fdk_preview_slices, at);
  FIELD(fdk_preview_slices, x_slice);
  FIELD(fdk_preview_slices, x_slice_bytes);
  FIELD(fdk_preview_slices, y_slice);
  FIELD(fdk_preview_slices, y_slice_bytes);
  FIELD(fdk_preview_slices, z_slice);
  FIELD(fdk_preview_slices, z_slice_bytes);

  ENUM(FDK_MAX_DEVICES);
  ENUM(FDK_MAX_GPU_ARCHS);
  ENUM(FDK_GPU_CODE_NONE);
  ENUM(FDK_GPU_CODE_SASS);
  ENUM(FDK_GPU_CODE_JIT);
  ENUM(FDK_VERSION_MAJOR);

  ENUM(FDK_OK);
  ENUM(FDK_ERROR_INVALID_ARGUMENT);
  ENUM(FDK_ERROR_OUT_OF_RANGE);
  ENUM(FDK_ERROR_INVALID_STATE);
  ENUM(FDK_ERROR_DUPLICATE);
  ENUM(FDK_ERROR_BUDGET);
  ENUM(FDK_ERROR_OUT_OF_MEMORY);
  ENUM(FDK_ERROR_BACKEND_UNAVAILABLE);
  ENUM(FDK_ERROR_DEVICE);
  ENUM(FDK_ERROR_CANCELLED);
  ENUM(FDK_ERROR_UNSUPPORTED);
  ENUM(FDK_ERROR_STRUCT_SIZE);
  ENUM(FDK_ERROR_INTERNAL);

  ENUM(FDK_WINDOW_RAM_LAK);
  ENUM(FDK_WINDOW_SHEPP_LOGAN);
  ENUM(FDK_WINDOW_COSINE);
  ENUM(FDK_WINDOW_HAMMING);
  ENUM(FDK_WINDOW_HANN);

  ENUM(FDK_AUTO);
  ENUM(FDK_ON);
  ENUM(FDK_OFF);

  ENUM(FDK_BACKEND_AUTO);
  ENUM(FDK_BACKEND_CPU);
  ENUM(FDK_BACKEND_CUDA);

  ENUM(FDK_PRECISION_FLOAT32);
  ENUM(FDK_PRECISION_FLOAT16);

  ENUM(FDK_SCAN_UNIFORM);
  ENUM(FDK_SCAN_VIEWS);
  ENUM(FDK_SCAN_MATRICES);

  ENUM(FDK_PHASE_ACQUIRING);
  ENUM(FDK_PHASE_RECONSTRUCTING);
  ENUM(FDK_PHASE_DONE);
  ENUM(FDK_PHASE_CANCELLED);

  ENUM(FDK_OUTSIDE_FOV_BACKPROJECT);
  ENUM(FDK_OUTSIDE_FOV_ZERO);

  ENUM(FDK_STORE_REDUCE_PRECISION);
  ENUM(FDK_STORE_STRICT);

  ENUM(FDK_STORE_FITS);
  ENUM(FDK_STORE_LIKELY);
  ENUM(FDK_STORE_UNLIKELY);

  ENUM(FDK_VIEW_ABSENT);
  ENUM(FDK_VIEW_PENDING);
  ENUM(FDK_VIEW_STORED);
  ENUM(FDK_VIEW_FAILED);

  ENUM(FDK_ESTIMATE_OFFSET);
  ENUM(FDK_ESTIMATE_TILT);
  ENUM(FDK_ESTIMATE_LOW_STRUCTURE);
  ENUM(FDK_ESTIMATE_FEW_PAIRS);

  ENUM(FDK_PREVIEW_COMPLETE);
  ENUM(FDK_PREVIEW_FAILED);
  return 0;
}
