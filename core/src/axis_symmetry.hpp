// The in-plane tilt from the mirror symmetry of a full scan's sum of views
// (GeometryEstimator's tilt where the conjugate rays leave it loose).
//
// Over a full circle of evenly weighted views, a point at angle phi is seen
// at beta and at 2 phi - beta with mirrored columns (u odd in beta - phi)
// and the same row and magnification (even in beta - phi). So the sum of
// the views is mirror-symmetric about the rotation axis's image on the
// detector, exactly, in cone beam too, whatever the object, also where the
// object overhangs the detector (a point and its mirror are compared only
// where both are measured). The axis's image is the line u = offset + v tan
// tilt: the line of mirror symmetry of the sum gives the tilt. A short scan
// or an uneven sampling breaks the symmetry; the caller checks for a full
// circle. Internal to core/: not a header of the library's interface.
#pragma once
#include <vector>

namespace fdk {
class ThreadPool;
}

namespace fdk::symmetry {

// Rows of the detector summed over the views, in bands (the rows the
// geometry estimate keeps), binned by `bin` columns and `row_bin` rows.
struct ViewSum {
  int columns = 0;     // binned columns
  int bin = 1;         // detector columns per binned pixel
  int row_bin = 1;     // detector rows per binned pixel
  double aspect = 1;   // a detector row's height over a column's width (the detector's spacings)
  int margin = 0;      // binned rows at each edge of a band read, never compared (a sample's reach along v)
  int row_stride = 1;  // compare every row_stride-th row (mirror images are read on every row)
  struct Band {
    int first_row = 0;  // detector row where the band's first binned row starts
    int count = 0;      // binned rows
  };
  std::vector<Band> bands;
  std::vector<double> pixels;  // the bands' binned rows one after the other
};

struct MirrorAxis {
  bool found = false;
  double column = 0;  // detector column of the axis at detector row `row`
  double tilt = 0;    // radians, on the detector (in mm): the axis runs tan(tilt) * aspect columns per row
  double sigma = 0;   // radians: the residual and curvature's, or a coarser blur's change
};

// The line of mirror symmetry of `sum`, through detector row `row`,
// searched from column `start` and any tilt within about 2 degrees; its
// sums on `pool`'s threads when there is one (the same result either way).
MirrorAxis mirror_axis(const ViewSum& sum, double row, double start, ThreadPool* pool = nullptr);

// The line of mirror symmetry of `sum` nearest a known one (`near`, found
// by mirror_axis on a sum this one is part of): Gauss-Newton from it, its
// sigma the fit's alone. The grid of tilts, the sandwich sigma and the
// coarser blur that mirror_axis adds serve a sigma this fit is not asked
// for, and cost twice the fit itself.
MirrorAxis mirror_line_near(const ViewSum& sum, double row, const MirrorAxis& near, ThreadPool* pool = nullptr);

}  // namespace fdk::symmetry
