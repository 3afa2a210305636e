# %% [markdown]
# # Three orthogonal slices of a reconstruction
#
# A head phantom reconstructed, then its axial, coronal and sagittal slices
# through the centre, drawn in millimetres from the volume's spacing and
# origin. In Jupyter the figure shows inline and the progress bar is a
# widget (`tqdm.auto`); as a script (`python3 orthogonal_slices.py [DIR]`)
# it draws with matplotlib's Agg backend and writes DIR/orthogonal_slices.png
# (DIR default: a new temporary folder), printing the path. Needs numpy and
# matplotlib; tqdm if installed.

# %%
import os
import sys
import tempfile

import matplotlib

if "ipykernel" not in sys.modules:  # a script: no display, the PNG only
    matplotlib.use("Agg")
import matplotlib.pyplot as plt

import fdk_ct
from fdk_ct import phantom

try:
    from tqdm.auto import tqdm as progress
except ImportError:  # tqdm is optional
    progress = None

# %%
geometry = fdk_ct.Geometry.circular(180, sid=500.0, sdd=750.0, detector_spacing=1.2,
                                    detector_shape=(96, 128))
projections = phantom.project(geometry, phantom.modified_shepp_logan(scale=60.0, mu=0.02))
volume = fdk_ct.reconstruct(projections, geometry, fdk_ct.Volume((96, 96, 96), 1.25),
                            window="hann", progress=progress)
print(repr(volume))

# %% [markdown]
# `volume` is (z, y, x) in RTK's frame, whose rotation axis is y: an axial
# image is a y plane, and y runs vertically in the other two. `extent` puts
# each voxel's centre at origin + index * spacing (ITK's origin), so the
# axes read in mm.

# %%
def extent(axis_rows, axis_cols):
    """imshow's extent (left, right, bottom, top) for a slice whose rows run
    along volume axis `axis_rows` and columns along `axis_cols`."""
    def span(axis):
        first = volume.origin[axis] - volume.spacing[axis] / 2
        return first, first + volume.shape[axis] * volume.spacing[axis]
    left, right = span(axis_cols)
    top, bottom = span(axis_rows)
    return left, right, bottom, top


nz, ny, nx = volume.shape
slices = [  # title, image (rows, cols), extent, column axis, row axis
    ("axial (y = %d)" % (ny // 2), volume[:, ny // 2, :], extent(0, 2), "x (mm)", "z (mm)"),
    ("coronal (z = %d)" % (nz // 2), volume[nz // 2, :, :], extent(1, 2), "x (mm)", "y (mm)"),
    ("sagittal (x = %d)" % (nx // 2), volume[:, :, nx // 2].T, extent(1, 0), "z (mm)", "y (mm)"),
]
figure, axes = plt.subplots(1, 3, figsize=(12, 4.2), constrained_layout=True)
for ax, (title, image, box, xlabel, ylabel) in zip(axes, slices):
    shown = ax.imshow(image, cmap="gray", extent=box, vmin=0.0, vmax=0.01)  # the brain; the skull saturates
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
figure.colorbar(shown, ax=axes, shrink=0.8, label="attenuation (1/mm)")

# %%
if "ipykernel" not in sys.modules:
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="fdk_ct-")
    path = os.path.join(folder, "orthogonal_slices.png")
    figure.savefig(path, dpi=80)
    print("wrote", path)
