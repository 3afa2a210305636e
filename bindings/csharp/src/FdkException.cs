// Native status codes and the one place that turns them into exceptions.
using System;
using System.Runtime.Serialization;

namespace Fdk
{
    /// <summary>fdk_status: the codes are pinned by the C ABI and never renumbered.</summary>
    public enum FdkStatus
    {
        /// <summary>Success (never carried by an exception).</summary>
        Ok = 0,
        /// <summary>NULL pointer, bad size or value, NaN/Inf.</summary>
        InvalidArgument = 1,
        /// <summary>An index outside its valid range.</summary>
        OutOfRange = 2,
        /// <summary>A call in the wrong order.</summary>
        InvalidState = 3,
        /// <summary>A projection index pushed twice.</summary>
        Duplicate = 4,
        /// <summary>A memory budget too small for the plan.</summary>
        Budget = 5,
        /// <summary>An allocation failed.</summary>
        OutOfMemory = 6,
        /// <summary>The requested backend or device is absent.</summary>
        BackendUnavailable = 7,
        /// <summary>A GPU or driver failure; the message names it.</summary>
        Device = 8,
        /// <summary>The reconstruction was cancelled.</summary>
        Cancelled = 9,
        /// <summary>A valid request this build cannot do.</summary>
        Unsupported = 10,
        /// <summary>struct_size unknown: binding and library disagree on a struct.</summary>
        StructSize = 11,
        /// <summary>A bug in fdk: please report the message.</summary>
        Internal = 12,
    }

    /// <summary>
    /// A failed fdk call: <see cref="Status"/> is the native status code and
    /// <see cref="NativeMessage"/> the library's own message
    /// (fdk_last_error, or fdk_last_create_error when no handle exists yet).
    /// Cancellation is reported the same way, with Status == Cancelled.
    /// </summary>
    [Serializable]
    public class FdkException : Exception
    {
        /// <summary>The native status code of the failed call.</summary>
        public FdkStatus Status { get; private set; }
        /// <summary>The library's own message (empty when it gave none).</summary>
        public string NativeMessage { get; private set; }

        /// <summary>An exception for <paramref name="status"/>; the message is the status name and <paramref name="nativeMessage"/>.</summary>
        public FdkException(FdkStatus status, string nativeMessage)
            : base(Describe(status, nativeMessage))
        {
            Status = status;
            NativeMessage = nativeMessage ?? string.Empty;
        }

        /// <summary>Deserialises an exception written by <see cref="GetObjectData"/>.</summary>
        protected FdkException(SerializationInfo info, StreamingContext context)
            : base(info, context)
        {
            Status = (FdkStatus)info.GetInt32("Status");
            NativeMessage = info.GetString("NativeMessage");
        }

        /// <summary>Serialises <see cref="Status"/> and <see cref="NativeMessage"/> with the base fields.</summary>
        public override void GetObjectData(SerializationInfo info, StreamingContext context)
        {
            base.GetObjectData(info, context);
            info.AddValue("Status", (int)Status);
            info.AddValue("NativeMessage", NativeMessage);
        }

        private static string Describe(FdkStatus status, string nativeMessage)
        {
            string name = NativeMethods.CopyString(NativeMethods.fdk_status_string((int)status));
            if (string.IsNullOrEmpty(nativeMessage)) return name;
            // The library's messages usually start with the status name already.
            return nativeMessage.StartsWith(name, StringComparison.Ordinal) ? nativeMessage
                                                                            : name + ": " + nativeMessage;
        }

        /// <summary>
        /// The one translation from status code to exception. Must be called
        /// right after the failed native call, on the same thread (the create
        /// error is thread-local, a handle's error is overwritten by the next
        /// call on it).
        /// </summary>
        internal static void Check(int status, FdkContextHandle context)
        {
            if (status == (int)FdkStatus.Ok) return;
            string message;
            if (context == null || context.IsInvalid || context.IsClosed)
                message = NativeMethods.CopyString(NativeMethods.fdk_last_create_error());
            else
                message = NativeMethods.CopyString(NativeMethods.fdk_last_error(context));
            throw new FdkException((FdkStatus)status, message);
        }

        /// <summary>
        /// <see cref="Check(int, FdkContextHandle)"/> for a call on an
        /// estimator: its own last error (the create error when there is no
        /// estimator yet). Same rule: right after the failed call.
        /// </summary>
        internal static void CheckEstimator(int status, FdkEstimatorHandle estimator)
        {
            if (status == (int)FdkStatus.Ok) return;
            string message;
            if (estimator == null || estimator.IsInvalid || estimator.IsClosed)
                message = NativeMethods.CopyString(NativeMethods.fdk_last_create_error());
            else
                message = NativeMethods.CopyString(NativeMethods.fdk_estimator_last_error(estimator));
            throw new FdkException((FdkStatus)status, message);
        }
    }
}
