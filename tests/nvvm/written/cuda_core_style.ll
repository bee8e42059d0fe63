target triple = "nvptx64-unknown-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"

define void @simple(i32 addrspace(1)* %data) {
entry:
  store i32 42, i32 addrspace(1)* %data
  ret void
}

define void @"second_kernel"(i32 addrspace(1)* %data) {
entry:
  store i32 7, i32 addrspace(1)* %data
  ret void
}

!nvvm.annotations = !{!0, !2}
!0 = !{void (i32 addrspace(1)*)* @simple, !"kernel", i32 1, !"maxntidx", i32 128}
!2 = !{void (i32 addrspace(1)*)* @"second_kernel", !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
