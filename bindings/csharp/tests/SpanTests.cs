// The Span and Memory overloads of push and read give the same volume as the
// array overloads, read the caller's slice in place (offsets honoured), and
// refuse memory shorter than a projection.
using System;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class SpanTests
    {
        private static readonly int Pixels = TestScan.Columns * TestScan.Rows;

        private static float[] ArrayVolume()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                r.Finish();
                return r.ReadVolume();
            }
        }

        [Test]
        public void SpanAndMemoryPushesAndSpanReadsGiveTheArrayVolume()
        {
            float[] expected = ArrayVolume();
            float[] all = TestScan.Projections();
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                for (int v = 0; v < TestScan.Views; ++v)
                {
                    if (v % 2 == 0) r.PushProjection(v, new ReadOnlySpan<float>(all, v * Pixels, Pixels));
                    else r.PushProjection(v, new ReadOnlyMemory<float>(all, v * Pixels, Pixels));
                }
                r.Finish();
                // Each slab into a slice of one array, 7 floats in, so that an
                // ignored offset would show.
                const int Lead = 7;
                var volume = new float[Lead + expected.Length + 3];
                long perPlane = (long)TestScan.N * TestScan.N;
                for (int s = 0; s < r.SlabCount; ++s)
                {
                    SlabInfo info = r.GetSlabInfo(s);
                    int start = Lead + checked((int)(info.YBegin * perPlane));
                    r.ReadSlab(s, new Span<float>(volume, start, checked((int)info.FloatCount)));
                }
                for (int i = 0; i < Lead; ++i) Assert.AreEqual(0f, volume[i], "written before the slice");
                for (int i = 0; i < expected.Length; ++i)
                    if (expected[i] != volume[Lead + i])
                        Assert.Fail("voxel " + i + ": " + volume[Lead + i] + " != " + expected[i]);
            }
        }

        [Test]
        public void ASpanShorterThanAProjectionIsRefused()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                var shortPixels = new float[Pixels - 1];
                Assert.Throws<ArgumentException>(() => r.PushProjection(0, new ReadOnlySpan<float>(shortPixels)));
                Assert.Throws<ArgumentException>(() => r.PushProjection(0, new ReadOnlyMemory<float>(shortPixels)));
                Assert.AreEqual(ViewStateKind.Absent, r.GetViewState(0).State);
            }
        }

        [Test]
        public void ASpanTooShortForTheSlabIsRefusedByTheLibrary()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                TestScan.PushAll(r);
                r.Finish();
                long floats = r.GetSlabInfo(0).FloatCount;
                var e = Assert.Throws<FdkException>(() => r.ReadSlab(0, new Span<float>(new float[floats - 1])));
                Assert.AreEqual(FdkStatus.InvalidArgument, e.Status);
            }
        }
    }
}
