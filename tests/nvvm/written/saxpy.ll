target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define void @saxpy(float %a, float* nocapture readonly %x, float* nocapture %y, i32 %n) {
entry:
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %body, label %done
body:
  %px = getelementptr float, float* %x, i32 %i
  %py = getelementptr float, float* %y, i32 %i
  %vx = load float, float* %px
  %vy = load float, float* %py
  %m = fmul float %a, %vx
  %s = fadd float %m, %vy
  store float %s, float* %py
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float, float*, float*, i32)* @saxpy, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
