; ModuleID = "records$9"
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"

@"_ZN08NumbaEnv8__main__7recordsB2v9B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIdLi1E1A7mutable7alignedE5ArrayI6RecordILi457EELi1E1A7mutable7alignedE" = common global i8* null
define void @"_ZN8__main__7recordsB2v9B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIdLi1E1A7mutable7alignedE5ArrayI6RecordILi457EELi1E1A7mutable7alignedE"(i8* %"out.0", i8* %"out.1", i64 %"out.2", i64 %"out.3", double* %"out.4", i64 %"out.5.0", i64 %"out.6.0", i8* %"particles.0", i8* %"particles.1", i64 %"particles.2", i64 %"particles.3", [24 x i8]* %"particles.4", i64 %"particles.5.0", i64 %"particles.6.0")
{
entry:
  %"inserted.meminfo" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} undef, i8* %"out.0", 0
  %"inserted.parent" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.meminfo", i8* %"out.1", 1
  %"inserted.nitems" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.parent", i64 %"out.2", 2
  %"inserted.itemsize" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.nitems", i64 %"out.3", 3
  %"inserted.data" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.itemsize", double* %"out.4", 4
  %".17" = insertvalue [1 x i64] undef, i64 %"out.5.0", 0
  %"inserted.shape" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.data", [1 x i64] %".17", 5
  %".18" = insertvalue [1 x i64] undef, i64 %"out.6.0", 0
  %"inserted.strides" = insertvalue {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.shape", [1 x i64] %".18", 6
  %"inserted.meminfo.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} undef, i8* %"particles.0", 0
  %"inserted.parent.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.meminfo.1", i8* %"particles.1", 1
  %"inserted.nitems.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.parent.1", i64 %"particles.2", 2
  %"inserted.itemsize.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.nitems.1", i64 %"particles.3", 3
  %"inserted.data.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.itemsize.1", [24 x i8]* %"particles.4", 4
  %".19" = insertvalue [1 x i64] undef, i64 %"particles.5.0", 0
  %"inserted.shape.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.data.1", [1 x i64] %".19", 5
  %".20" = insertvalue [1 x i64] undef, i64 %"particles.6.0", 0
  %"inserted.strides.1" = insertvalue {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.shape.1", [1 x i64] %".20", 6
  %"out" = alloca {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  %"particles" = alloca {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  %"i" = alloca i64
  store i64 0, i64* %"i"
  %".38" = alloca {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".38"
  %"$64pred" = alloca i1
  store i1 0, i1* %"$64pred"
  %".55" = alloca {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55"
  %".99" = alloca {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99"
  %".137" = alloca {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137"
  br label %"B0"
B0:
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %"inserted.strides", {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %"inserted.strides.1", {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  %".25" = trunc i64 1 to i32
  %".26" = call i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()
  %".27" = sext i32 %".26" to i64
  %".28" = call i32 @"llvm.nvvm.read.ptx.sreg.ntid.x"()
  %".29" = sext i32 %".28" to i64
  %".30" = call i32 @"llvm.nvvm.read.ptx.sreg.ctaid.x"()
  %".31" = sext i32 %".30" to i64
  %".32" = mul i64 %".29", %".31"
  %".33" = add i64 %".32", %".27"
  %".35" = load i64, i64* %"i"
  store i64 %".33", i64* %"i"
  %".37" = load {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".38"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %".37", {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".38"
  %".42" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".38", i32 0, i32 2
  %".43" = load i64, i64* %".42"
  %".44" = load i64, i64* %"i"
  %".45" = icmp slt i64 %".44", %".43"
  %".47" = load i1, i1* %"$64pred"
  store i1 %".45", i1* %"$64pred"
  %".49" = load i1, i1* %"$64pred"
  br i1 %".49", label %"B66", label %"B180"
B66:
  %".51" = load i1, i1* %"$64pred"
  store i1 0, i1* %"$64pred"
  %".53" = load {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  %".54" = load i64, i64* %"i"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %".53", {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55"
  %".59" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55", i32 0, i32 5
  %".60" = getelementptr inbounds [1 x i64], [1 x i64]* %".59", i32 0, i32 0
  %".61" = load i64, i64* %".60", !range !1
  %".62" = insertvalue [1 x i64] undef, i64 %".61", 0
  %".63" = extractvalue [1 x i64] %".62", 0
  %".64" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55", i32 0, i32 6
  %".65" = load [1 x i64], [1 x i64]* %".64"
  %".66" = extractvalue [1 x i64] %".65", 0
  %".67" = icmp slt i64 %".54", 0
  %".68" = add i64 %".54", %".63"
  %".69" = select  i1 %".67", i64 %".68", i64 %".54"
  %".70" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55", i32 0, i32 5
  %".71" = getelementptr inbounds [1 x i64], [1 x i64]* %".70", i32 0, i32 0
  %".72" = load i64, i64* %".71", !range !1
  %".73" = insertvalue [1 x i64] undef, i64 %".72", 0
  %".74" = extractvalue [1 x i64] %".73", 0
  %".75" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55", i32 0, i32 6
  %".76" = load [1 x i64], [1 x i64]* %".75"
  %".77" = extractvalue [1 x i64] %".76", 0
  %".78" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".55", i32 0, i32 4
  %".79" = load [24 x i8]*, [24 x i8]** %".78"
  %".80" = mul i64 %".77", %".69"
  %".81" = ptrtoint [24 x i8]* %".79" to i64
  %".82" = add i64 %".81", %".80"
  %".83" = inttoptr i64 %".82" to [24 x i8]*
  %".84" = getelementptr inbounds [24 x i8], [24 x i8]* %".83", i32 0, i32 0
  %".85" = bitcast i8* %".84" to double*
  %".86" = load double, double* %".85"
  %".87" = getelementptr inbounds [24 x i8], [24 x i8]* %".83", i32 0, i32 8
  %".88" = bitcast i8* %".87" to float*
  %".89" = load float, float* %".88"
  %".90" = fpext float %".89" to double
  %".91" = fmul double %".86", %".90"
  %".92" = getelementptr inbounds [24 x i8], [24 x i8]* %".83", i32 0, i32 16
  %".93" = bitcast i8* %".92" to i64*
  %".94" = load i64, i64* %".93"
  %".95" = sitofp i64 %".94" to double
  %".96" = fadd double %".91", %".95"
  %".97" = load {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  %".98" = load i64, i64* %"i"
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99"
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} %".97", {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99"
  %".103" = getelementptr inbounds {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99", i32 0, i32 5
  %".104" = getelementptr inbounds [1 x i64], [1 x i64]* %".103", i32 0, i32 0
  %".105" = load i64, i64* %".104", !range !1
  %".106" = insertvalue [1 x i64] undef, i64 %".105", 0
  %".107" = extractvalue [1 x i64] %".106", 0
  %".108" = getelementptr inbounds {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99", i32 0, i32 6
  %".109" = load [1 x i64], [1 x i64]* %".108"
  %".110" = extractvalue [1 x i64] %".109", 0
  %".111" = icmp slt i64 %".98", 0
  %".112" = add i64 %".98", %".107"
  %".113" = select  i1 %".111", i64 %".112", i64 %".98"
  %".114" = getelementptr inbounds {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99", i32 0, i32 5
  %".115" = getelementptr inbounds [1 x i64], [1 x i64]* %".114", i32 0, i32 0
  %".116" = load i64, i64* %".115", !range !1
  %".117" = insertvalue [1 x i64] undef, i64 %".116", 0
  %".118" = extractvalue [1 x i64] %".117", 0
  %".119" = getelementptr inbounds {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99", i32 0, i32 6
  %".120" = load [1 x i64], [1 x i64]* %".119"
  %".121" = extractvalue [1 x i64] %".120", 0
  %".122" = getelementptr inbounds {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %".99", i32 0, i32 4
  %".123" = load double*, double** %".122"
  %".124" = mul i64 %".121", %".113"
  %".125" = ptrtoint double* %".123" to i64
  %".126" = add i64 %".125", %".124"
  %".127" = inttoptr i64 %".126" to double*
  store double %".96", double* %".127"
  %".129" = load {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  %".131" = getelementptr inbounds [24 x i8], [24 x i8]* %".83", i32 0, i32 0
  %".132" = bitcast i8* %".131" to double*
  %".133" = load double, double* %".132"
  %".134" = fadd double %".133", 0x3ff0000000000000
  %".135" = load {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  %".136" = load i64, i64* %"i"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} %".135", {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137"
  %".141" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137", i32 0, i32 5
  %".142" = getelementptr inbounds [1 x i64], [1 x i64]* %".141", i32 0, i32 0
  %".143" = load i64, i64* %".142", !range !1
  %".144" = insertvalue [1 x i64] undef, i64 %".143", 0
  %".145" = extractvalue [1 x i64] %".144", 0
  %".146" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137", i32 0, i32 6
  %".147" = load [1 x i64], [1 x i64]* %".146"
  %".148" = extractvalue [1 x i64] %".147", 0
  %".149" = icmp slt i64 %".136", 0
  %".150" = add i64 %".136", %".145"
  %".151" = select  i1 %".149", i64 %".150", i64 %".136"
  %".152" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137", i32 0, i32 5
  %".153" = getelementptr inbounds [1 x i64], [1 x i64]* %".152", i32 0, i32 0
  %".154" = load i64, i64* %".153", !range !1
  %".155" = insertvalue [1 x i64] undef, i64 %".154", 0
  %".156" = extractvalue [1 x i64] %".155", 0
  %".157" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137", i32 0, i32 6
  %".158" = load [1 x i64], [1 x i64]* %".157"
  %".159" = extractvalue [1 x i64] %".158", 0
  %".160" = getelementptr inbounds {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %".137", i32 0, i32 4
  %".161" = load [24 x i8]*, [24 x i8]** %".160"
  %".162" = mul i64 %".159", %".151"
  %".163" = ptrtoint [24 x i8]* %".161" to i64
  %".164" = add i64 %".163", %".162"
  %".165" = inttoptr i64 %".164" to [24 x i8]*
  %".166" = load {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  %".168" = load i64, i64* %"i"
  store i64 0, i64* %"i"
  %".170" = getelementptr inbounds [24 x i8], [24 x i8]* %".165", i32 0, i32 0
  %".171" = bitcast i8* %".170" to double*
  store double %".134", double* %".171"
  ret void
B180:
  %".175" = load {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  store {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, [24 x i8]*, [1 x i64], [1 x i64]}* %"particles"
  %".177" = load {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, double*, [1 x i64], [1 x i64]}* %"out"
  %".179" = load i64, i64* %"i"
  store i64 0, i64* %"i"
  %".181" = load i1, i1* %"$64pred"
  store i1 0, i1* %"$64pred"
  ret void
}

declare i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()

declare i32 @"llvm.nvvm.read.ptx.sreg.ntid.x"()

declare i32 @"llvm.nvvm.read.ptx.sreg.ctaid.x"()

@"llvm.used" = appending global [1 x i8*] [i8* bitcast (void (i8*, i8*, i64, i64, double*, i64, i64, i8*, i8*, i64, i64, [24 x i8]*, i64, i64)* @"_ZN8__main__7recordsB2v9B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIdLi1E1A7mutable7alignedE5ArrayI6RecordILi457EELi1E1A7mutable7alignedE" to i8*)], section "llvm.metadata"
!nvvmir.version = !{ !0 }
!nvvm.annotations = !{ !2 }
!0 = !{ i32 2, i32 0, i32 3, i32 2 }
!1 = !{ i64 0, i64 9223372036854775807 }
!2 = !{ void (i8*, i8*, i64, i64, double*, i64, i64, i8*, i8*, i64, i64, [24 x i8]*, i64, i64)* @"_ZN8__main__7recordsB2v9B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIdLi1E1A7mutable7alignedE5ArrayI6RecordILi457EELi1E1A7mutable7alignedE", !"kernel", i32 1 }