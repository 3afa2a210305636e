# %% [markdown]
# # fdk_ct in ten cells: a head phantom, reconstructed two ways
#
# Run as a script (`python3 phantom_tour.py`) or cell by cell in an editor
# that understands `# %%` (VS Code, Spyder, Jupytext). It needs numpy;
# matplotlib, if installed, shows the slices.

# %%
import threading
import time

import numpy as np

import fdk_ct
from fdk_ct import phantom

print("fdk_ct", fdk_ct.__version__, "on libfdk", fdk_ct.library_version(),
      "from", fdk_ct.library_path())
print("CUDA usable:", fdk_ct.backend_info()["cuda_usable"])

# %% [markdown]
# A circular scan in RTK's convention (rotation axis y): 360 views over a
# full turn, source 500 mm from the axis, detector 750 mm from the source,
# 192 x 256 pixels of 0.8 mm.

# %%
geometry = fdk_ct.Geometry.circular(360, sid=500.0, sdd=750.0, detector_spacing=0.8,
                                    detector_shape=(192, 256))
head = phantom.modified_shepp_logan(scale=60.0, mu=0.02)   # skull 0.02 / mm
projections = phantom.project(geometry, head)               # (views, rows, cols)
print("projections", projections.shape, projections.dtype)

# %% [markdown]
# ## One call
# The volume comes back as (z, y, x) with its spacing and origin.

# %%
grid = fdk_ct.Volume((128, 128, 128), spacing=1.0)
start = time.perf_counter()
volume = fdk_ct.reconstruct(projections, geometry, grid, window="hann", cutoff=0.8)
print(f"{volume.shape} in {time.perf_counter() - start:.2f} s,"
      f" spacing {volume.spacing}, origin {volume.origin}")

# %% [markdown]
# Against the truth: the brain's attenuation is 0.2 of the skull's.

# %%
truth = phantom.voxelize(head, grid)
brain = (truth > 0.003) & (truth < 0.005)
print(f"brain: {volume[brain].mean():.5f} / mm (truth 0.00400)")

# %% [markdown]
# ## Streaming, as a scanner delivers views
# One thread pushes views while another takes the slabs as they are ready;
# a progress callable (a tqdm bar's update works the same) reports both.

# %%
def show(p: fdk_ct.Progress) -> None:
    if p.views_pushed % 90 == 0 or p.phase == "done":
        print(f"  {p.phase:14s} views {p.views_pushed}/{p.views_total}"
              f"  slabs {p.slabs_done}/{p.slabs_total}  {100 * p.fraction:5.1f} %")


streamed = np.empty(grid.shape, np.float32)
with fdk_ct.Reconstructor(geometry, grid, window="hann", cutoff=0.8, progress=show) as rec:
    def reader() -> None:
        for slab in rec.slabs():                    # waits for finish()
            streamed[:, slab.y_begin:slab.y_end, :] = slab.data

    t = threading.Thread(target=reader)
    t.start()
    for i, view in enumerate(projections):          # e.g. from the detector's callback
        rec.push(i, view)
    rec.finish()
    t.join()
    print("store:", rec.store_info())
print("streamed == one call:", np.array_equal(streamed, volume))

# %% [markdown]
# ## Errors are exceptions with the library's message

# %%
bad = projections[0].copy()
bad[10, 20] = np.nan
with fdk_ct.Reconstructor(geometry, grid) as rec:
    try:
        rec.push(0, bad)
    except fdk_ct.errors.InvalidArgumentError as e:
        print("refused:", e)
    rec.push(0, projections[0])                     # the handle is still usable

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    axes[0].imshow(volume[64], cmap="gray")        # z = 0: coronal (x across, y down)
    axes[1].imshow(volume[:, 49], cmap="gray")     # an axial plane through the ventricles
    axes[2].imshow(volume[:, :, 64], cmap="gray")  # x = 0: sagittal
    plt.show()
