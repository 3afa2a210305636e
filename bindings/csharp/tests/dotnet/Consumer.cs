// A .NET consumer of the package's netstandard2.0 Fdk.dll: Span push, Span
// read, ReadSlabAsync, IProgress; prints a checksum compared with Mono's.
using System;
using System.Threading;
using Fdk;

internal static class Consumer
{
    private sealed class Counter : IProgress<ReconstructionProgress>
    {
        public int Reports;
        public void Report(ReconstructionProgress p) { Interlocked.Increment(ref Reports); }
    }

    private static int Main()
    {
        int n = 32, cols = 72, rows = 64, views = 90;
        var settings = new ReconstructionSettings {
            Volume = Volume.Centered(n, n, n, 0.5),
            Detector = Detector.Centered(cols, rows, 0.5),
            Scan = Scan.Uniform(views, 100.0, 150.0),
            Backend = Backend.Cpu, Threads = 2, SlabThickness = 8,
        };
        var all = new float[views * cols * rows];
        for (int i = 0; i < all.Length; ++i) all[i] = (float)Math.Sin(i * 0.001) * 0.01f + 0.02f;
        var counter = new Counter();
        double sum = 0;
        using (var r = new Reconstructor(settings, counter))
        {
            for (int v = 0; v < views; ++v) r.PushProjection(v, new ReadOnlySpan<float>(all, v * cols * rows, cols * rows));
            r.Finish(CancellationToken.None);
            for (int s = 0; s < r.SlabCount; ++s)
            {
                float[] slab = r.ReadSlabAsync(s).Result;
                var again = new float[slab.Length];
                r.ReadSlab(s, new Span<float>(again));
                for (int i = 0; i < slab.Length; ++i) { if (slab[i] != again[i]) return 5; sum += slab[i]; }
            }
        }
        Console.WriteLine("runtime " + Environment.Version + ", native " + Reconstructor.NativeVersion +
                          ", reports " + counter.Reports + ", sum " + sum.ToString("R"));
        return counter.Reports > views ? 0 : 6;
    }
}
