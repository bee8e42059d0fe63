; ModuleID = "clamp$6"
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"

@"_ZN08NumbaEnv8__main__5clampB2v6B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3dEddd" = common global i8* null
define linkonce_odr i32 @"_ZN8__main__5clampB2v6B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3dEddd"(double* %".ret", double %"v", double %"lo", double %"hi")
{
entry:
  br label %"B0"
B0:
  %".6" = call double @"__nv_fmax"(double %"v", double %"lo")
  %".7" = call double @"__nv_fmin"(double %".6", double %"hi")
  store double %".7", double* %".ret"
  ret i32 0
}

declare double @"__nv_fmax"(double %".1", double %".2")

declare double @"__nv_fmin"(double %".1", double %".2")

!nvvmir.version = !{ !0 }
!0 = !{ i32 2, i32 0, i32 3, i32 2 }