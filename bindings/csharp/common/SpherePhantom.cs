// Exact cone-beam projections of uniform spheres, for the tests and the
// example (compiled into both; not part of the Fdk assembly).
//
// Geometry as in fdk.h (RTK's): for gantry angle g the scanner frame is the
// fixed frame rotated by Ry(-g); in it the source sits at (0, 0, SID) and the
// detector pixel (u, v) at (u, v, SID - SDD). A sphere of centre c and radius
// r seen along the ray from S with unit direction d is crossed over a chord
// of 2 sqrt(r^2 - |(c - S) x d|^2) when that is real.
using System;
using System.Collections.Generic;

namespace Fdk.Samples
{
    public sealed class Sphere
    {
        public double X, Y, Z, Radius, Mu;

        public Sphere(double x, double y, double z, double radius, double mu)
        {
            X = x; Y = y; Z = z; Radius = radius; Mu = mu;
        }
    }

    public sealed class SpherePhantom
    {
        private readonly List<Sphere> _spheres = new List<Sphere>();

        public IList<Sphere> Spheres { get { return _spheres; } }

        public SpherePhantom Add(double x, double y, double z, double radius, double mu)
        {
            _spheres.Add(new Sphere(x, y, z, radius, mu));
            return this;
        }

        /// <summary>The attenuation at a point: the sum over the spheres containing it.</summary>
        public double MuAt(double x, double y, double z)
        {
            double mu = 0;
            foreach (Sphere s in _spheres)
            {
                double dx = x - s.X, dy = y - s.Y, dz = z - s.Z;
                if (dx * dx + dy * dy + dz * dz <= s.Radius * s.Radius) mu += s.Mu;
            }
            return mu;
        }

        /// <summary>
        /// The line integrals of one view, Rows rows of Columns floats, into
        /// pixels[offset ..].
        /// </summary>
        public void Project(Detector detector, double gantryAngleDeg, double sid, double sdd,
                            float[] pixels, int offset)
        {
            double g = -gantryAngleDeg * Math.PI / 180.0;
            double cg = Math.Cos(g), sg = Math.Sin(g);
            // Sphere centres in the scanner frame: Ry(-gantry) * c.
            int n = _spheres.Count;
            var cx = new double[n];
            var cy = new double[n];
            var cz = new double[n];
            for (int k = 0; k < n; ++k)
            {
                Sphere s = _spheres[k];
                cx[k] = cg * s.X + sg * s.Z;
                cy[k] = s.Y;
                cz[k] = -sg * s.X + cg * s.Z;
            }
            for (int j = 0; j < detector.Rows; ++j)
            {
                double v = detector.OriginV + j * detector.SpacingV;
                for (int i = 0; i < detector.Columns; ++i)
                {
                    double u = detector.OriginU + i * detector.SpacingU;
                    // Ray from S = (0, 0, sid) towards (u, v, sid - sdd).
                    double length = Math.Sqrt(u * u + v * v + sdd * sdd);
                    double dx = u / length, dy = v / length, dz = -sdd / length;
                    double sum = 0;
                    for (int k = 0; k < n; ++k)
                    {
                        double px = cx[k], py = cy[k], pz = cz[k] - sid;
                        double qx = py * dz - pz * dy;
                        double qy = pz * dx - px * dz;
                        double qz = px * dy - py * dx;
                        double d2 = qx * qx + qy * qy + qz * qz;
                        double r2 = _spheres[k].Radius * _spheres[k].Radius;
                        if (d2 < r2) sum += _spheres[k].Mu * 2.0 * Math.Sqrt(r2 - d2);
                    }
                    pixels[offset + j * detector.Columns + i] = (float)sum;
                }
            }
        }
    }
}
