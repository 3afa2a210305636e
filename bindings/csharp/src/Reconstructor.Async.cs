// Task-based slab reads. fdk_read_slab blocks while a slab is computed, so
// the async read does not call it until fdk_slab_ready says the slab is
// ready (then it only copies): between polls no thread is held. A slab the
// library does not compute ahead (one larger than what the budget leaves the
// slab cache, or any while the cache is full of slabs computed ahead and not
// yet read) would never become ready: when no slab has completed for a while
// the read is handed to a blocking fdk_read_slab on a thread of its own,
// never a thread-pool thread.
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace Fdk
{
    public sealed partial class Reconstructor
    {
        /// <summary>Polling interval bounds of the async read, in milliseconds.</summary>
        private const int FirstPollMs = 1, LongestPollMs = 32;

        /// <summary>
        /// How long the async read polls while no slab completes before it
        /// reads on a dedicated thread (internal: the tests shorten it).
        /// </summary>
        internal static TimeSpan StallBeforeBlockingRead = TimeSpan.FromMilliseconds(500);

        /// <summary>
        /// Copies slab <paramref name="slab"/> into <paramref name="destination"/>
        /// (GetSlabInfo(slab).FloatCount floats) without blocking the caller:
        /// polls <see cref="IsSlabReady"/> (which has the library compute it in
        /// the background) and copies once it is ready; a slab that does not
        /// become ready while nothing else completes is read on a dedicated
        /// thread. Only after Finish. The destination must stay untouched until
        /// the task completes. Cancelling <paramref name="cancellationToken"/>
        /// cancels the reconstruction (fdk_cancel, irreversible, as
        /// <see cref="Cancel"/>) and the task (OperationCanceledException, the
        /// native FdkException as its InnerException).
        /// </summary>
        public Task ReadSlabAsync(int slab, Memory<float> destination,
                                  CancellationToken cancellationToken = default(CancellationToken))
        {
            // Argument and state errors throw here, not in the task.
            SlabInfo info = GetSlabInfo(slab);
            if (destination.Length < info.FloatCount)
                throw new ArgumentException("destination needs " + info.FloatCount + " floats, has " +
                                            destination.Length, "destination");
            return ReadWhenReady(slab, destination, cancellationToken);
        }

        /// <summary>
        /// Slab <paramref name="slab"/> in a new array, read as
        /// <see cref="ReadSlabAsync(int, Memory{float}, CancellationToken)"/> does.
        /// </summary>
        public async Task<float[]> ReadSlabAsync(int slab,
                                                 CancellationToken cancellationToken = default(CancellationToken))
        {
            var buffer = new float[checked((int)GetSlabInfo(slab).FloatCount)];
            await ReadSlabAsync(slab, buffer, cancellationToken).ConfigureAwait(false);
            return buffer;
        }

        private async Task ReadWhenReady(int slab, Memory<float> destination, CancellationToken token)
        {
            using (CancelOn(token))
            {
                try
                {
                    int pollMs = FirstPollMs;
                    int slabsDone = GetProgress().SlabsDone;
                    Stopwatch sinceCompletion = Stopwatch.StartNew();
                    while (!IsSlabReady(slab))
                    {
                        int done = GetProgress().SlabsDone;
                        if (done != slabsDone)
                        {
                            slabsDone = done;
                            sinceCompletion.Restart();
                        }
                        else if (sinceCompletion.Elapsed >= StallBeforeBlockingRead)
                        {
                            await Task.Factory.StartNew(() => ReadSlab(slab, destination.Span), CancellationToken.None,
                                                        TaskCreationOptions.LongRunning, TaskScheduler.Default)
                                      .ConfigureAwait(false);
                            return;
                        }
                        await Task.Delay(pollMs).ConfigureAwait(false);
                        pollMs = Math.Min(2 * pollMs, LongestPollMs);
                    }
                    // Ready: a copy, no computation.
                    ReadSlab(slab, destination.Span);
                }
                catch (FdkException e) when (e.Status == FdkStatus.Cancelled && token.IsCancellationRequested)
                {
                    throw new OperationCanceledException("the reconstruction was cancelled", e, token);
                }
            }
        }
    }
}
