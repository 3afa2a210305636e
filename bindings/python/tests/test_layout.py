"""The ctypes mirrors against fdk.h as the C compiler lays it out."""
import ctypes
import os

import pytest

import fdk_ct
from fdk_ct import _native, _options, errors, reconstructor

MIRRORS = {
    "fdk_view": _native.View, "fdk_volume": _native.VolumeC,
    "fdk_detector": _native.DetectorC, "fdk_scan": _native.Scan,
    "fdk_config": _native.Config, "fdk_slab_info": _native.SlabInfo,
    "fdk_progress": _native.ProgressC, "fdk_store_info": _native.StoreInfo,
    "fdk_plan_info": _native.PlanInfo, "fdk_timings": _native.Timings,
    "fdk_device_stats": _native.DeviceStats, "fdk_backend_info": _native.BackendInfoC,
    "fdk_geometry_estimate": _native.GeometryEstimateC,
    "fdk_preview_info": _native.PreviewInfoC, "fdk_preview_slices": _native.PreviewSlicesC,
}


@pytest.fixture(scope="module")
def facts(layout_facts):
    return layout_facts


def test_every_struct_is_mirrored_with_its_size_and_offsets(facts):
    sizes, offsets, _ = facts
    assert set(sizes) == set(MIRRORS), "a struct of fdk.h without a ctypes mirror"
    for name, cls in MIRRORS.items():
        assert ctypes.sizeof(cls) == sizes[name], name
        fields = [f for f, _ in cls._fields_]
        c_fields = [f for (s, f) in offsets if s == name]
        assert sorted(fields) == sorted(c_fields), name
        for f in fields:
            assert getattr(cls, f).offset == offsets[(name, f)], f"{name}.{f}"


def test_backend_info_ends_with_the_driver_fields_of_0_6(facts):
    # Appended in 0.6 after message[256]: a 0.5 library takes the struct
    # that ends at driver_version (backend_info passes that size there).
    sizes, offsets, _ = facts
    info = _native.BackendInfoC
    name = "fdk_backend_info"
    assert offsets[(name, "driver_version")] == offsets[(name, "message")] + 256
    assert offsets[(name, "driver_required")] == offsets[(name, "driver_version")] + 4
    assert sizes[name] == offsets[(name, "driver_required")] + 4
    assert (info.driver_version.offset, info.driver_required.offset, ctypes.sizeof(info)) \
        == (offsets[(name, "driver_version")], offsets[(name, "driver_required")], sizes[name])
    assert [f for f, _ in info._fields_][-3:] == ["message", "driver_version", "driver_required"]


def test_enum_values_match(facts):
    _, _, enums = facts
    for name, value in _options.WINDOWS.items():
        assert enums["FDK_WINDOW_" + name.upper().replace("-", "_")] == value
    for name, value in _options.BACKENDS.items():
        assert enums["FDK_BACKEND_" + name.upper()] == value
    for name, value in _options.PRECISIONS.items():
        assert enums["FDK_PRECISION_" + name.upper()] == value
    for name, value in _options.OUTSIDE_FOV.items():
        assert enums["FDK_OUTSIDE_FOV_" + name.upper()] == value
    for name, value in _options.STORE_POLICIES.items():
        assert enums["FDK_STORE_" + name.upper().replace("-", "_")] == value
    for i, name in enumerate(reconstructor.PHASES):
        assert enums["FDK_PHASE_" + name.upper()] == i
    for i, name in enumerate(reconstructor.VIEW_STATES):
        assert enums["FDK_VIEW_" + name.upper()] == i
    assert (enums["FDK_AUTO"], enums["FDK_ON"], enums["FDK_OFF"]) == (0, 1, 2)
    assert (enums["FDK_SCAN_UNIFORM"], enums["FDK_SCAN_VIEWS"], enums["FDK_SCAN_MATRICES"]) \
        == (0, 1, 2)
    assert (enums["FDK_PREVIEW_COMPLETE"], enums["FDK_PREVIEW_FAILED"]) \
        == (_native.PREVIEW_COMPLETE, _native.PREVIEW_FAILED)
    assert enums["FDK_MAX_DEVICES"] == _native.MAX_DEVICES
    assert enums["FDK_MAX_GPU_ARCHS"] == _native.MAX_GPU_ARCHS
    statuses = {k[len("FDK_ERROR_"):]: v for k, v in enums.items() if k.startswith("FDK_ERROR_")}
    assert len(statuses) == 12
    for name, value in statuses.items():
        cls = errors.error_class(value)
        assert cls is not errors.FdkError and cls.status == value
        assert cls.__name__.lower().startswith(name.replace("_", "").lower()[:8]), (name, cls)


def test_the_library_agrees_on_the_struct_sizes_it_initialises():
    lib = _native.lib()
    cfg = _native.Config()
    _native.init_config(cfg)
    assert cfg.struct_size == ctypes.sizeof(_native.Config)
    assert cfg.scan.struct_size == ctypes.sizeof(_native.Scan)
    assert cfg.cutoff == 1.0 and cfg.scan.arc_deg == 360.0


def test_version_and_library_path():
    assert fdk_ct.library_version() == fdk_ct.__version__
    chosen = os.environ.get("FDK_CT_LIBRARY")
    if chosen:  # the file the loader mapped is the one asked for
        assert os.path.realpath(fdk_ct.library_path()) == os.path.realpath(chosen)
    assert os.path.basename(fdk_ct.library_path()).startswith("libfdk.so")
    info = fdk_ct.backend_info()
    assert isinstance(info["cuda_usable"], bool)


def test_backend_info_reports_the_driver():
    info = fdk_ct.backend_info()
    assert isinstance(info["driver_version"], int) and info["driver_version"] >= 0
    assert isinstance(info["driver_required"], int) and info["driver_required"] >= 0
    for key in ("driver_version", "driver_required"):
        v = info[key]
        assert info[key + "_text"] == (f"{v // 1000}.{v % 1000 // 10}" if v else "")
    if info["cuda_usable"]:  # a usable GPU means a driver at least as new as required
        assert info["driver_required"] > 0 and info["driver_version"] >= info["driver_required"]
    if info["cuda_built"]:  # the GPU code says what it needs: CUDA 13.0 (driver 580) or newer
        assert info["driver_required"] >= 13000
    else:
        assert not info["cuda_usable"]
    assert fdk_ct._cuda_version_text(13000) == "13.0"
    assert fdk_ct._cuda_version_text(12080) == "12.8"
    assert fdk_ct._cuda_version_text(0) == "" and fdk_ct._cuda_version_text(None) == ""


def test_the_fast_data_pointer_is_numpys():
    import numpy as np
    block = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
    for a in (block, block[2], block[1:, 2:, 3:], block[:, ::2], block.transpose(1, 0, 2),
              np.moveaxis(block, 0, 1)[3], block[::-1], np.asfortranarray(block)):
        assert _native.data_pointer(a) == a.ctypes.data
