# %% [markdown]
# # A live preview while the scanner turns
#
# A scanner thread pushes a head phantom's views one by one at its own pace
# (here 120 views a second); meanwhile this thread reads the live preview
# every half second (`Reconstructor.previews`) and keeps its axial slice.
# The frames, from the first views to the complete scan, come out as one
# strip. In Jupyter the strip shows inline; as a script (`python3
# live_preview.py [DIR]`) it draws with matplotlib's Agg backend and writes
# DIR/live_preview.png (DIR default: a new temporary folder), printing the
# path. Needs numpy and matplotlib.

# %%
import os
import sys
import tempfile
import threading
import time

import matplotlib

if "ipykernel" not in sys.modules:  # a script: no display, the PNG only
    matplotlib.use("Agg")
import matplotlib.pyplot as plt

import fdk_ct
from fdk_ct import phantom

# %%
geometry = fdk_ct.Geometry.circular(240, sid=500.0, sdd=750.0, detector_spacing=1.2,
                                    detector_shape=(96, 128))
projections = phantom.project(geometry, phantom.modified_shepp_logan(scale=60.0, mu=0.02))
grid = fdk_ct.Volume((96, 96, 96), 1.25)
VIEWS_PER_SECOND = 120.0

# %% [markdown]
# The pusher must end the scan (`finish`), also when it fails, or
# `previews` goes on yielding. The preview's grid is the default one: the
# volume's field at half its voxels per axis here (48³).

# %%
frames = []  # (views in the preview, coverage, complete, axial slice)
with fdk_ct.Reconstructor(geometry, grid, preview=True, window="hann") as rec:
    def scanner():
        try:
            start = time.monotonic()
            for i in range(geometry.num_views):
                time.sleep(max(0.0, start + i / VIEWS_PER_SECOND - time.monotonic()))
                rec.push(i, projections[i])
        finally:
            rec.finish()

    pusher = threading.Thread(target=scanner)
    pusher.start()
    for s in rec.previews(interval=0.5):  # an axial slice: y is the rotation axis
        if s.info.views > 0:  # the first read may come before the first view
            frames.append((s.info.views, s.info.coverage, s.info.complete, s.y))
    pusher.join()
    volume = rec.read_volume()

for views, coverage, complete, _ in frames:
    print(f"frame: {views} of {geometry.num_views} views, coverage {coverage:.2f}"
          + (", complete" if complete else ""))
print(repr(volume))

# %% [markdown]
# Every frame is divided by its coverage (the views' share of the angular
# weight), so grey values match the finished volume's from the first
# frames on; what is missing shows as streaks. One colour window for all.

# %%
fig, axes = plt.subplots(1, len(frames), figsize=(2.4 * len(frames), 2.9), dpi=80, squeeze=False,
                         layout="constrained")
for ax, (views, coverage, complete, image) in zip(axes[0], frames):
    ax.imshow(image, cmap="gray", vmin=0.0, vmax=0.01)
    state = "complete" if complete else f"{100 * coverage:.0f} % of the weight"
    ax.set_title(f"{views} view{'s' if views != 1 else ''}: {state}", fontsize=9)
    ax.axis("off")
if "ipykernel" in sys.modules:
    plt.show()
else:
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="fdk-live-preview-")
    path = os.path.join(folder, "live_preview.png")
    fig.savefig(path)
    print(f"wrote {path}")
