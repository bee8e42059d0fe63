; ModuleID = "smooth$7"
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"

@"_ZN08NumbaEnv8__main__6smoothB2v7B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3dEd" = common global i8* null
define linkonce_odr i32 @"_ZN8__main__6smoothB2v7B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3dEd"(double* %".ret", double %"v")
{
entry:
  %".8" = alloca double
  store double 0.0, double* %".8"
  br label %"B0"
B0:
  %".4" = fmul double %"v", %"v"
  %".5" = fmul double 0x4000000000000000, %"v"
  %".6" = fsub double 0x4008000000000000, %".5"
  %".7" = fmul double %".4", %".6"
  store double 0.0, double* %".8"
  %".11" = call i32 @"_ZN8__main__5clampB2v6B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3dEddd"(double* %".8", double %".7", double              0x0, double 0x3ff0000000000000)
  %".12" = icmp eq i32 %".11", 0
  %".13" = icmp eq i32 %".11", -2
  %".14" = or i1 %".12", %".13"
  %".15" = xor i1 %".14", -1
  %".16" = icmp eq i32 %".11", -1
  %".17" = icmp eq i32 %".11", -3
  %".18" = icmp sge i32 %".11", 1
  %".19" = load double, double* %".8"
  br i1 %".15", label %"B0.if", label %"B0.endif", !prof !1
B0.if:
  ret i32 %".11"
B0.endif:
  store double %".19", double* %".ret"
  ret i32 0
}

declare i32 @"_ZN8__main__5clampB2v6B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3dEddd"(double* %".ret", double %"v", double %"lo", double %"hi")

!nvvmir.version = !{ !0 }
!0 = !{ i32 2, i32 0, i32 3, i32 2 }
!1 = !{ !"branch_weights", i32 1, i32 99 }