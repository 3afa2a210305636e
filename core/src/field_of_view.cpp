#include <cmath>

#include "fdk/core/backend.hpp"

namespace fdk {

void field_of_view_rows(const ScanModel& model, int z_begin, int z_end, unsigned char* mask) {
  const int nx = model.volume.size[0];
  const double last = model.detector.size[0] - 1;
  const bool mirror = model.redundancy.offset_detector;
  for (int view : model.view_order) {
    const IndexMatrix& pm = model.matrices[static_cast<size_t>(view)];
    if (!pm.y_separable()) continue;
    const double* m = pm.m.data();
    const ViewGeometry& g = model.views[static_cast<size_t>(view)];
    const double principal_col = (g.principal_u() - model.detector.origin[0]) / model.detector.spacing[0];
    for (int k = z_begin; k < z_end; ++k) {
      unsigned char* row = mask + static_cast<size_t>(k) * nx;
      for (int i = 0; i < nx; ++i) {
        if (!row[i]) continue;
        const double w = m[8] * i + m[10] * k + m[11];
        bool seen = false;
        if (w > 0) {
          const double u = (m[0] * i + m[2] * k + m[3]) / w;
          seen = u >= 0 && u <= last;
          if (!seen && mirror) {
            const double mirrored = 2 * principal_col - u;
            seen = mirrored >= 0 && mirrored <= last;
          }
        }
        if (!seen) row[i] = 0;
      }
    }
  }
}

}  // namespace fdk
