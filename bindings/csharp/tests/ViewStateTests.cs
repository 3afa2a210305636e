// fdk 0.3 through the binding: where each view stands (GetViewState) and
// the store policy (settings, PlanInfo, StoreInfo).
using System;
using NUnit.Framework;

namespace Fdk.Tests
{
    [TestFixture]
    public class ViewStateTests
    {
        [Test]
        public void PushedViewsAreStoredAndTheOthersAbsent()
        {
            const int pushed = 5;
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                for (int v = 0; v < TestScan.Views; ++v)
                    Assert.AreEqual(ViewStateKind.Absent, r.GetViewState(v).State, "view " + v);
                TestScan.PushAll(r, pushed);
                // A push returns once its view is accepted; Finish waits until it is stored.
                r.Finish();
                for (int v = 0; v < TestScan.Views; ++v)
                {
                    ViewState s = r.GetViewState(v);
                    Assert.AreEqual(v, s.Index);
                    Assert.AreEqual(v < pushed ? ViewStateKind.Stored : ViewStateKind.Absent, s.State, "view " + v);
                    Assert.AreEqual(FdkStatus.Ok, s.Failure, "view " + v);
                }
            }
        }

        [Test]
        public void AViewIndexOutsideTheScanThrowsOutOfRange()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                foreach (int index in new[] { -1, TestScan.Views, int.MaxValue, int.MinValue })
                {
                    var e = Assert.Throws<FdkException>(() => r.GetViewState(index), "index " + index);
                    Assert.AreEqual(FdkStatus.OutOfRange, e.Status);
                    StringAssert.Contains(index.ToString(System.Globalization.CultureInfo.InvariantCulture),
                                          e.NativeMessage);
                }
                // The handle stays usable.
                TestScan.PushAll(r, 1);
                r.Finish();
                Assert.AreEqual(ViewStateKind.Stored, r.GetViewState(0).State);
            }
        }

        [Test]
        public void AProgressHandlerMayAskAViewsState()
        {
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                int asked = 0;
                r.Progress += (sender, e) => {
                    if (e.Progress.Phase != Phase.Acquiring) return;
                    ViewState s = r.GetViewState(0);
                    Assert.AreNotEqual(ViewStateKind.Absent, s.State);
                    ++asked;
                };
                TestScan.PushAll(r, 3);
                r.Finish();
                Assert.Greater(asked, 0);
            }
        }

        [Test]
        public void GetViewStateAfterDisposeThrowsObjectDisposed()
        {
            var r = new Reconstructor(TestScan.Settings());
            r.Dispose();
            Assert.Throws<ObjectDisposedException>(() => r.GetViewState(0));
        }

        [Test]
        public void TheStorePolicyIsReducePrecisionByDefaultOrStrict()
        {
            Assert.AreEqual(StorePolicy.ReducePrecision, new ReconstructionSettings().StorePolicy);
            foreach (StorePolicy policy in new[] { StorePolicy.ReducePrecision, StorePolicy.Strict })
            {
                ReconstructionSettings settings = TestScan.Settings();
                if (policy == StorePolicy.Strict) settings.StorePolicy = policy;
                using (var r = new Reconstructor(settings))
                {
                    PlanInfo plan = r.GetPlanInfo();
                    Assert.AreEqual(policy, plan.StorePolicy);
                    // 90 small views in the default budget (half the RAM).
                    Assert.AreEqual(StoreFit.Fits, plan.StoreFit);
                    Assert.Greater(plan.StoreLimit, (long)TestScan.Views * TestScan.Columns * TestScan.Rows * 4);
                    Assert.Less(plan.StoreLimit, plan.HostMemoryBudget);
                    TestScan.PushAll(r);
                    r.Finish();
                    StoreInfo store = r.GetStoreInfo();
                    Assert.AreEqual(TestScan.Views, store.ViewsStored);
                    Assert.AreEqual(0, store.ViewsReduced);
                }
            }
        }

        [Test]
        public void AStoreTooSmallForFloat32ReducesPrecisionByDefaultAndStrictRefuses()
        {
            // The store codes views only when the scan would not fit it
            // uncoded (since 3b6082d). So: the uncoded size, measured; then
            // the coded float32 size, under a budget just below the uncoded
            // one; then a budget whose store holds about 70 % of the coded size.
            long plainBytes;
            long overhead;
            using (var r = new Reconstructor(TestScan.Settings()))
            {
                PlanInfo plan = r.GetPlanInfo();
                overhead = plan.HostMemoryBudget - plan.StoreLimit;
                TestScan.PushAll(r);
                r.Finish();
                plainBytes = r.GetStoreInfo().StoredBytes;
            }
            long float32Bytes;
            ReconstructionSettings coded = TestScan.Settings();
            coded.HostMemoryBudget = overhead + plainBytes * 99 / 100;
            using (var r = new Reconstructor(coded))
            {
                TestScan.PushAll(r);
                r.Finish();
                StoreInfo store = r.GetStoreInfo();
                Assert.AreEqual(0, store.ViewsReduced, "the coded float32 scan was meant to fit");
                Assert.Greater(store.Ratio, 1.0, "the views were meant to be coded");
                float32Bytes = store.StoredBytes;
            }
            long budget = overhead + float32Bytes * 7 / 10;

            ReconstructionSettings reduce = TestScan.Settings();
            reduce.HostMemoryBudget = budget;
            using (var r = new Reconstructor(reduce))
            {
                PlanInfo plan = r.GetPlanInfo();
                Assert.AreEqual(StorePolicy.ReducePrecision, plan.StorePolicy);
                Assert.Less(plan.StoreLimit, float32Bytes, "the budget was meant to be too small for float32");
                TestScan.PushAll(r);
                r.Finish();
                StoreInfo store = r.GetStoreInfo();
                Assert.AreEqual(TestScan.Views, store.ViewsStored);
                Assert.Greater(store.ViewsReduced, 0);
                Assert.Greater(store.RelativeErrorBound, 0.0);
                for (int v = 0; v < TestScan.Views; ++v)
                    Assert.AreEqual(ViewStateKind.Stored, r.GetViewState(v).State, "view " + v);
            }

            ReconstructionSettings strict = TestScan.Settings();
            strict.HostMemoryBudget = budget;
            strict.StorePolicy = StorePolicy.Strict;
            using (var r = new Reconstructor(strict))
            {
                Assert.AreEqual(StorePolicy.Strict, r.GetPlanInfo().StorePolicy);
                var e = Assert.Throws<FdkException>(() => { TestScan.PushAll(r); r.Finish(); });
                Assert.AreEqual(FdkStatus.Budget, e.Status);
                Assert.AreEqual(0, r.GetStoreInfo().ViewsReduced);
                Assert.Less(r.GetStoreInfo().ViewsStored, TestScan.Views);
            }
        }
    }
}
