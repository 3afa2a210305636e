// The simulated scanner of fdk-scan-sim: raw detector frames of the 3D
// Shepp-Logan phantom with dark current, per-pixel gain and Poisson-like
// noise, fully deterministic for a given seed (every frame has its own
// random stream, so frames can be rendered in any order or in parallel).
#pragma once

#include <fdk/fdk.h>
#include <fdk/phantom.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace fdk_sim {

struct ScannerModel {
  int columns = 128, rows = 128;
  double pixel = 0.8;           // mm
  double sid = 500, sdd = 800;  // mm
  int views = 180;
  double first_angle = 0, arc = 360;
  double phantom_scale = 0;     // mm; 0 = fit the field of view
  // Toft's higher-contrast densities instead of the original ones (fdk/phantom.hpp).
  bool modified_phantom = false;
  // Attenuation per unit of phantom density (1/mm): the line integrals are
  // mu * density * length. 0.02/mm makes density 1 roughly water at 70 keV,
  // so the brain (1.02) reconstructs as 0.0204/mm.
  double mu = 0.02;
  double i0 = 20000;            // open-beam counts (mean gain)
  double dark_level = 100;      // counts
  double gain_spread = 0.1;     // gain in [1 - s, 1 + s]
  double read_noise = 2;        // counts (Gaussian), on every frame
  bool noise = true;
  uint64_t seed = 1;
  // A misaligned scanner: the real detector sits this many pixels off along u
  // and is turned by this angle in its own plane, while the geometry written
  // for it (view()) says neither, as a scanner whose calibration has drifted.
  // The frames show the real detector; fdk-convert --apply-estimate finds it.
  double detector_offset_px = 0;
  double detector_tilt_deg = 0;
};

// A small, portable generator (SplitMix64) and Box-Muller normals, so the
// frames are identical on every platform and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  double normal() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(6.283185307179586 * u2);
    have_spare_ = true;
    return r * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
  double spare_ = 0;
  bool have_spare_ = false;
};

class Scanner {
 public:
  explicit Scanner(const ScannerModel& m) : m_(m) {
    fdk_config_init(&config_);
    config_.detector.size[0] = m.columns;
    config_.detector.size[1] = m.rows;
    config_.detector.spacing[0] = config_.detector.spacing[1] = m.pixel;
    config_.detector.origin[0] = -0.5 * (m.columns - 1) * m.pixel;
    config_.detector.origin[1] = -0.5 * (m.rows - 1) * m.pixel;
    config_.scan.kind = FDK_SCAN_UNIFORM;
    config_.scan.num_views = m.views;
    config_.scan.first_angle_deg = m.first_angle;
    config_.scan.arc_deg = m.arc;
    config_.scan.uniform.sid = m.sid;
    config_.scan.uniform.sdd = m.sdd;
    scale_ = m.phantom_scale;
    if (!(scale_ > 0)) {
      // The skull (semi-axes 0.69, 0.92, 0.90 x scale along x, y, z) inside
      // the circle every view sees and inside the detector's height at the
      // isocentre, with a 10 % margin.
      const double half_u = 0.5 * m.columns * m.pixel, half_v = 0.5 * m.rows * m.pixel;
      const double radius = m.sid * std::sin(std::atan(half_u / m.sdd));
      const double height = half_v * m.sid / m.sdd;
      scale_ = 0.9 * std::min(radius / 0.90, height / 0.92);
    }
    phantom_ = m.modified_phantom ? fdk::phantom::modified_shepp_logan_3d(scale_)
                                  : fdk::phantom::shepp_logan_3d(scale_);
    // Per-pixel dark offset and gain: a smooth pattern plus a fixed random
    // part, from the seed.
    Random r(m.seed ^ 0xD1B54A32D192ED03ull);
    const size_t n = static_cast<size_t>(m.columns) * m.rows;
    dark_.resize(n);
    gain_.resize(n);
    for (int y = 0; y < m.rows; ++y) {
      for (int x = 0; x < m.columns; ++x) {
        const size_t i = static_cast<size_t>(y) * m.columns + x;
        const double smooth = std::sin(0.05 * x + 0.3) * std::cos(0.04 * y);
        gain_[i] = 1.0 + m.gain_spread * (0.6 * smooth + 0.4 * (2 * r.uniform() - 1));
        dark_[i] = m.dark_level * (1.0 + 0.2 * (2 * r.uniform() - 1));
      }
    }
  }

  const fdk_config& config() const { return config_; }
  double phantom_scale() const { return scale_; }
  // The brain's density (skull + brain ellipsoids): 1.02, or 0.2 modified.
  double brain_density() const { return phantom_[0].density + phantom_[1].density; }
  const std::vector<fdk::phantom::Ellipsoid>& phantom() const { return phantom_; }
  // The nominal geometry of view i: what the scanner's geometry file says.
  fdk_view view(int i) const { return fdk::phantom::view_of(config_, i); }
  // Where view i really was: the nominal view with the detector's offset and
  // tilt (ScannerModel).
  fdk_view true_view(int i) const {
    fdk_view v = view(i);
    v.projection_offset_x += m_.detector_offset_px * m_.pixel;
    v.in_plane_angle_deg += m_.detector_tilt_deg;
    return v;
  }

  // Exact line integrals of view i (rows x columns) as the real detector saw
  // them, in 1/mm * mm.
  void line_integrals(int i, float* out) const {
    fdk::phantom::project_view(phantom_, true_view(i), config_.detector, out);
    const size_t n = static_cast<size_t>(m_.columns) * m_.rows;
    for (size_t k = 0; k < n; ++k) out[k] = static_cast<float>(out[k] * m_.mu);
  }

  // Raw counts of view i: dark + gain * I0 * exp(-p) with Poisson-like noise
  // (Gaussian of the signal's variance) and read noise. `stream` separates
  // the frame kinds (0 projections, 1 flats, 2 darks).
  void raw_frame(int i, int stream, const float* p, std::vector<double>& out) const {
    const size_t n = dark_.size();
    out.resize(n);
    Random r(m_.seed * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(i) * 4 + stream);
    for (size_t k = 0; k < n; ++k) {
      const double signal = stream == 2 ? 0.0 : gain_[k] * m_.i0 * std::exp(p ? -p[k] : 0.0);
      double v = dark_[k] + signal;
      if (m_.noise) v += std::sqrt(signal) * r.normal() + m_.read_noise * r.normal();
      out[k] = v;
    }
  }

 private:
  ScannerModel m_;
  fdk_config config_{};
  double scale_ = 0;
  std::vector<fdk::phantom::Ellipsoid> phantom_;
  std::vector<double> dark_, gain_;
};

}  // namespace fdk_sim
