; ModuleID = "local_array$4"
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"

@"_ZN08NumbaEnv8__main__11local_arrayB2v4B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIfLi1E1A7mutable7alignedE5ArrayIfLi1E1A7mutable7alignedE" = common global i8* null
define void @"_ZN8__main__11local_arrayB2v4B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIfLi1E1A7mutable7alignedE5ArrayIfLi1E1A7mutable7alignedE"(i8* %"out.0", i8* %"out.1", i64 %"out.2", i64 %"out.3", float* %"out.4", i64 %"out.5.0", i64 %"out.6.0", i8* %"x.0", i8* %"x.1", i64 %"x.2", i64 %"x.3", float* %"x.4", i64 %"x.5.0", i64 %"x.6.0")
{
entry:
  %"inserted.meminfo" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} undef, i8* %"out.0", 0
  %"inserted.parent" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.meminfo", i8* %"out.1", 1
  %"inserted.nitems" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.parent", i64 %"out.2", 2
  %"inserted.itemsize" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.nitems", i64 %"out.3", 3
  %"inserted.data" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.itemsize", float* %"out.4", 4
  %".17" = insertvalue [1 x i64] undef, i64 %"out.5.0", 0
  %"inserted.shape" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.data", [1 x i64] %".17", 5
  %".18" = insertvalue [1 x i64] undef, i64 %"out.6.0", 0
  %"inserted.strides" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.shape", [1 x i64] %".18", 6
  %"inserted.meminfo.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} undef, i8* %"x.0", 0
  %"inserted.parent.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.meminfo.1", i8* %"x.1", 1
  %"inserted.nitems.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.parent.1", i64 %"x.2", 2
  %"inserted.itemsize.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.nitems.1", i64 %"x.3", 3
  %"inserted.data.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.itemsize.1", float* %"x.4", 4
  %".19" = insertvalue [1 x i64] undef, i64 %"x.5.0", 0
  %"inserted.shape.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.data.1", [1 x i64] %".19", 5
  %".20" = insertvalue [1 x i64] undef, i64 %"x.6.0", 0
  %"inserted.strides.1" = insertvalue {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.shape.1", [1 x i64] %".20", 6
  %"out" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  %"x" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
  %"i" = alloca i64
  store i64 0, i64* %"i"
  %".38" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".38"
  %"$64pred" = alloca i1
  store i1 0, i1* %"$64pred"
  %"_cudapy_lmem" = alloca [8 x float]
  store [8 x float] zeroinitializer, [8 x float]* %"_cudapy_lmem"
  %".54" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54"
  %"window" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  %".82" = alloca {i64, i64, i64}
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".82"
  %".92" = alloca {i64, i64, i64}
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".92"
  %".96" = alloca {i64*, i64, i64, i64*}
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".96"
  %".105" = alloca i64
  store i64 0, i64* %".105"
  %".108" = alloca i64
  store i64 0, i64* %".108"
  %"$phi170.0" = alloca {i64*, i64, i64, i64*}
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %"$phi170.0"
  %".147" = alloca {i64, i1}
  store {i64, i1} zeroinitializer, {i64, i1}* %".147"
  %".150" = alloca {i64*, i64, i64, i64*}
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".150"
  %".176" = alloca {i64, i1}
  store {i64, i1} zeroinitializer, {i64, i1}* %".176"
  %".182" = alloca {i64, i1}
  store {i64, i1} zeroinitializer, {i64, i1}* %".182"
  %"$170for_iter.3" = alloca i1
  store i1 0, i1* %"$170for_iter.3"
  %"$phi172.1" = alloca i64
  store i64 0, i64* %"$phi172.1"
  %".203" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203"
  %".238" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238"
  %"acc.2" = alloca double
  store double 0.0, double* %"acc.2"
  %".282" = alloca {i64, i64, i64}
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".282"
  %".292" = alloca {i64, i64, i64}
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".292"
  %".296" = alloca {i64*, i64, i64, i64*}
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".296"
  %".305" = alloca i64
  store i64 0, i64* %".305"
  %".308" = alloca i64
  store i64 0, i64* %".308"
  %"$phi270.0" = alloca {i64*, i64, i64, i64*}
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %"$phi270.0"
  %".347" = alloca {i64, i1}
  store {i64, i1} zeroinitializer, {i64, i1}* %".347"
  %".350" = alloca {i64*, i64, i64, i64*}
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".350"
  %".376" = alloca {i64, i1}
  store {i64, i1} zeroinitializer, {i64, i1}* %".376"
  %".382" = alloca {i64, i1}
  store {i64, i1} zeroinitializer, {i64, i1}* %".382"
  %"$270for_iter.3" = alloca i1
  store i1 0, i1* %"$270for_iter.3"
  %"$phi272.1" = alloca i64
  store i64 0, i64* %"$phi272.1"
  %".403" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403"
  %".455" = alloca {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455"
  br label %"B0"
B0:
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.strides", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %"inserted.strides.1", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
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
  %".37" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".38"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %".37", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".38"
  %".42" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".38", i32 0, i32 2
  %".43" = load i64, i64* %".42"
  %".44" = load i64, i64* %"i"
  %".45" = icmp slt i64 %".44", %".43"
  %".47" = load i1, i1* %"$64pred"
  store i1 %".45", i1* %"$64pred"
  %".49" = load i1, i1* %"$64pred"
  br i1 %".49", label %"B66", label %"B330"
B66:
  %".51" = load i1, i1* %"$64pred"
  store i1 0, i1* %"$64pred"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54"
  %".57" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 4
  %".58" = load float*, float** %".57"
  %".59" = bitcast [8 x float]* %"_cudapy_lmem" to float*
  %".60" = insertvalue [1 x i64] undef, i64 8, 0
  %".61" = insertvalue [1 x i64] undef, i64 4, 0
  %".62" = extractvalue [1 x i64] %".60", 0
  %".63" = mul nsw i64 1, %".62"
  %".64" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 5
  store [1 x i64] %".60", [1 x i64]* %".64"
  %".66" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 6
  store [1 x i64] %".61", [1 x i64]* %".66"
  %".68" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 4
  store float* %".59", float** %".68"
  %".70" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 3
  store i64 4, i64* %".70"
  %".72" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 0
  store i8* null, i8** %".72"
  %".74" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 1
  store i8* null, i8** %".74"
  %".76" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54", i32 0, i32 2
  store i64 %".63", i64* %".76"
  %".78" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".54"
  %".80" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %".78", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".82"
  %".85" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".82", i32 0, i32 0
  store i64 0, i64* %".85"
  %".87" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".82", i32 0, i32 1
  store i64 8, i64* %".87"
  %".89" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".82", i32 0, i32 2
  store i64 1, i64* %".89"
  %".91" = load {i64, i64, i64}, {i64, i64, i64}* %".82"
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".92"
  store {i64, i64, i64} %".91", {i64, i64, i64}* %".92"
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".96"
  %".99" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".92", i32 0, i32 0
  %".100" = load i64, i64* %".99"
  %".101" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".92", i32 0, i32 1
  %".102" = load i64, i64* %".101"
  %".103" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".92", i32 0, i32 2
  %".104" = load i64, i64* %".103"
  store i64 %".100", i64* %".105"
  %".110" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96", i32 0, i32 0
  store i64* %".105", i64** %".110"
  %".112" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96", i32 0, i32 1
  store i64 %".102", i64* %".112"
  %".114" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96", i32 0, i32 2
  store i64 %".104", i64* %".114"
  %".116" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96", i32 0, i32 3
  store i64* %".108", i64** %".116"
  %".118" = sub i64 %".102", %".100"
  %".119" = icmp sgt i64 %".118", 0
  %".120" = icmp sgt i64 %".104", 0
  %".121" = xor i1 %".119", %".120"
  %".122" = icmp eq i64 %".104", 0
  br i1 %".122", label %"B66.if", label %"B66.endif", !prof !1
B170:
  %".146" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %"$phi170.0"
  store {i64, i1} zeroinitializer, {i64, i1}* %".147"
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".150"
  store {i64*, i64, i64, i64*} %".146", {i64*, i64, i64, i64*}* %".150"
  %".154" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".150", i32 0, i32 3
  %".155" = load i64*, i64** %".154"
  %".156" = load i64, i64* %".155"
  %".157" = icmp sgt i64 %".156", 0
  %".158" = getelementptr inbounds {i64, i1}, {i64, i1}* %".147", i32 0, i32 1
  store i1 %".157", i1* %".158"
  br i1 %".157", label %"B170.if", label %"B170.endif"
B172:
  %".196" = load i1, i1* %"$170for_iter.3"
  store i1 0, i1* %"$170for_iter.3"
  %".198" = load i64, i64* %"$phi172.1"
  %".199" = load i64, i64* %"$phi172.1"
  store i64 0, i64* %"$phi172.1"
  %".201" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
  %".202" = load i64, i64* %"i"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %".201", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203"
  %".207" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203", i32 0, i32 5
  %".208" = getelementptr inbounds [1 x i64], [1 x i64]* %".207", i32 0, i32 0
  %".209" = load i64, i64* %".208", !range !2
  %".210" = insertvalue [1 x i64] undef, i64 %".209", 0
  %".211" = extractvalue [1 x i64] %".210", 0
  %".212" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203", i32 0, i32 6
  %".213" = load [1 x i64], [1 x i64]* %".212"
  %".214" = extractvalue [1 x i64] %".213", 0
  %".215" = icmp slt i64 %".202", 0
  %".216" = add i64 %".202", %".211"
  %".217" = select  i1 %".215", i64 %".216", i64 %".202"
  %".218" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203", i32 0, i32 5
  %".219" = getelementptr inbounds [1 x i64], [1 x i64]* %".218", i32 0, i32 0
  %".220" = load i64, i64* %".219", !range !2
  %".221" = insertvalue [1 x i64] undef, i64 %".220", 0
  %".222" = extractvalue [1 x i64] %".221", 0
  %".223" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203", i32 0, i32 6
  %".224" = load [1 x i64], [1 x i64]* %".223"
  %".225" = extractvalue [1 x i64] %".224", 0
  %".226" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".203", i32 0, i32 4
  %".227" = load float*, float** %".226"
  %".228" = mul i64 %".225", %".217"
  %".229" = ptrtoint float* %".227" to i64
  %".230" = add i64 %".229", %".228"
  %".231" = inttoptr i64 %".230" to float*
  %".232" = load float, float* %".231"
  %".233" = add nsw i64 %".198", 1
  %".234" = fpext float %".232" to double
  %".235" = sitofp i64 %".233" to double
  %".236" = fmul double %".234", %".235"
  %".237" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %".237", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238"
  %".242" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238", i32 0, i32 5
  %".243" = getelementptr inbounds [1 x i64], [1 x i64]* %".242", i32 0, i32 0
  %".244" = load i64, i64* %".243", !range !2
  %".245" = insertvalue [1 x i64] undef, i64 %".244", 0
  %".246" = extractvalue [1 x i64] %".245", 0
  %".247" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238", i32 0, i32 6
  %".248" = load [1 x i64], [1 x i64]* %".247"
  %".249" = extractvalue [1 x i64] %".248", 0
  %".250" = icmp slt i64 %".198", 0
  %".251" = add i64 %".198", %".246"
  %".252" = select  i1 %".250", i64 %".251", i64 %".198"
  %".253" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238", i32 0, i32 5
  %".254" = getelementptr inbounds [1 x i64], [1 x i64]* %".253", i32 0, i32 0
  %".255" = load i64, i64* %".254", !range !2
  %".256" = insertvalue [1 x i64] undef, i64 %".255", 0
  %".257" = extractvalue [1 x i64] %".256", 0
  %".258" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238", i32 0, i32 6
  %".259" = load [1 x i64], [1 x i64]* %".258"
  %".260" = extractvalue [1 x i64] %".259", 0
  %".261" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".238", i32 0, i32 4
  %".262" = load float*, float** %".261"
  %".263" = mul i64 %".252", 1
  %".264" = add i64 0, %".263"
  %".265" = getelementptr float, float* %".262", i64 %".264"
  %".266" = fptrunc double %".236" to float
  store float %".266", float* %".265"
  br label %"B170"
B210:
  %".269" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
  %".271" = load i64, i64* %"$phi172.1"
  store i64 0, i64* %"$phi172.1"
  %".273" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %"$phi170.0"
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %"$phi170.0"
  %".275" = load i1, i1* %"$170for_iter.3"
  store i1 0, i1* %"$170for_iter.3"
  %".277" = sitofp i64 0 to float
  %".278" = fpext float %".277" to double
  %".280" = load double, double* %"acc.2"
  store double %".278", double* %"acc.2"
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".282"
  %".285" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".282", i32 0, i32 0
  store i64 0, i64* %".285"
  %".287" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".282", i32 0, i32 1
  store i64 8, i64* %".287"
  %".289" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".282", i32 0, i32 2
  store i64 1, i64* %".289"
  %".291" = load {i64, i64, i64}, {i64, i64, i64}* %".282"
  store {i64, i64, i64} zeroinitializer, {i64, i64, i64}* %".292"
  store {i64, i64, i64} %".291", {i64, i64, i64}* %".292"
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".296"
  %".299" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".292", i32 0, i32 0
  %".300" = load i64, i64* %".299"
  %".301" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".292", i32 0, i32 1
  %".302" = load i64, i64* %".301"
  %".303" = getelementptr inbounds {i64, i64, i64}, {i64, i64, i64}* %".292", i32 0, i32 2
  %".304" = load i64, i64* %".303"
  store i64 %".300", i64* %".305"
  %".310" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296", i32 0, i32 0
  store i64* %".305", i64** %".310"
  %".312" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296", i32 0, i32 1
  store i64 %".302", i64* %".312"
  %".314" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296", i32 0, i32 2
  store i64 %".304", i64* %".314"
  %".316" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296", i32 0, i32 3
  store i64* %".308", i64** %".316"
  %".318" = sub i64 %".302", %".300"
  %".319" = icmp sgt i64 %".318", 0
  %".320" = icmp sgt i64 %".304", 0
  %".321" = xor i1 %".319", %".320"
  %".322" = icmp eq i64 %".304", 0
  br i1 %".322", label %"B210.if", label %"B210.endif", !prof !1
B270:
  %".346" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %"$phi270.0"
  store {i64, i1} zeroinitializer, {i64, i1}* %".347"
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %".350"
  store {i64*, i64, i64, i64*} %".346", {i64*, i64, i64, i64*}* %".350"
  %".354" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".350", i32 0, i32 3
  %".355" = load i64*, i64** %".354"
  %".356" = load i64, i64* %".355"
  %".357" = icmp sgt i64 %".356", 0
  %".358" = getelementptr inbounds {i64, i1}, {i64, i1}* %".347", i32 0, i32 1
  store i1 %".357", i1* %".358"
  br i1 %".357", label %"B270.if", label %"B270.endif"
B272:
  %".396" = load i1, i1* %"$270for_iter.3"
  store i1 0, i1* %"$270for_iter.3"
  %".398" = load i64, i64* %"$phi272.1"
  %".399" = load i64, i64* %"$phi272.1"
  store i64 0, i64* %"$phi272.1"
  %".401" = sub nsw i64 7, %".398"
  %".402" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %".402", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403"
  %".407" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403", i32 0, i32 5
  %".408" = getelementptr inbounds [1 x i64], [1 x i64]* %".407", i32 0, i32 0
  %".409" = load i64, i64* %".408", !range !2
  %".410" = insertvalue [1 x i64] undef, i64 %".409", 0
  %".411" = extractvalue [1 x i64] %".410", 0
  %".412" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403", i32 0, i32 6
  %".413" = load [1 x i64], [1 x i64]* %".412"
  %".414" = extractvalue [1 x i64] %".413", 0
  %".415" = icmp slt i64 %".401", 0
  %".416" = add i64 %".401", %".411"
  %".417" = select  i1 %".415", i64 %".416", i64 %".401"
  %".418" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403", i32 0, i32 5
  %".419" = getelementptr inbounds [1 x i64], [1 x i64]* %".418", i32 0, i32 0
  %".420" = load i64, i64* %".419", !range !2
  %".421" = insertvalue [1 x i64] undef, i64 %".420", 0
  %".422" = extractvalue [1 x i64] %".421", 0
  %".423" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403", i32 0, i32 6
  %".424" = load [1 x i64], [1 x i64]* %".423"
  %".425" = extractvalue [1 x i64] %".424", 0
  %".426" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".403", i32 0, i32 4
  %".427" = load float*, float** %".426"
  %".428" = mul i64 %".417", 1
  %".429" = add i64 0, %".428"
  %".430" = getelementptr float, float* %".427", i64 %".429"
  %".431" = load float, float* %".430"
  %".432" = add nsw i64 %".398", 1
  %".433" = fpext float %".431" to double
  %".434" = sitofp i64 %".432" to double
  %".435" = fcmp oeq double %".434",              0x0
  br i1 %".435", label %"B272.if", label %"B272.endif", !prof !1
B316:
  %".444" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"window"
  %".446" = load i64, i64* %"$phi272.1"
  store i64 0, i64* %"$phi272.1"
  %".448" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %"$phi270.0"
  store {i64*, i64, i64, i64*} zeroinitializer, {i64*, i64, i64, i64*}* %"$phi270.0"
  %".450" = load i1, i1* %"$270for_iter.3"
  store i1 0, i1* %"$270for_iter.3"
  %".452" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  %".453" = load double, double* %"acc.2"
  %".454" = load i64, i64* %"i"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} %".452", {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455"
  %".459" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455", i32 0, i32 5
  %".460" = getelementptr inbounds [1 x i64], [1 x i64]* %".459", i32 0, i32 0
  %".461" = load i64, i64* %".460", !range !2
  %".462" = insertvalue [1 x i64] undef, i64 %".461", 0
  %".463" = extractvalue [1 x i64] %".462", 0
  %".464" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455", i32 0, i32 6
  %".465" = load [1 x i64], [1 x i64]* %".464"
  %".466" = extractvalue [1 x i64] %".465", 0
  %".467" = icmp slt i64 %".454", 0
  %".468" = add i64 %".454", %".463"
  %".469" = select  i1 %".467", i64 %".468", i64 %".454"
  %".470" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455", i32 0, i32 5
  %".471" = getelementptr inbounds [1 x i64], [1 x i64]* %".470", i32 0, i32 0
  %".472" = load i64, i64* %".471", !range !2
  %".473" = insertvalue [1 x i64] undef, i64 %".472", 0
  %".474" = extractvalue [1 x i64] %".473", 0
  %".475" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455", i32 0, i32 6
  %".476" = load [1 x i64], [1 x i64]* %".475"
  %".477" = extractvalue [1 x i64] %".476", 0
  %".478" = getelementptr inbounds {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %".455", i32 0, i32 4
  %".479" = load float*, float** %".478"
  %".480" = mul i64 %".477", %".469"
  %".481" = ptrtoint float* %".479" to i64
  %".482" = add i64 %".481", %".480"
  %".483" = inttoptr i64 %".482" to float*
  %".484" = fptrunc double %".453" to float
  store float %".484", float* %".483"
  %".486" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  %".488" = load i64, i64* %"i"
  store i64 0, i64* %"i"
  %".490" = load double, double* %"acc.2"
  store double 0.0, double* %"acc.2"
  ret void
B330:
  %".494" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"x"
  %".496" = load {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  store {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]} zeroinitializer, {i8*, i8*, i64, i64, float*, [1 x i64], [1 x i64]}* %"out"
  %".498" = load i64, i64* %"i"
  store i64 0, i64* %"i"
  %".500" = load i1, i1* %"$64pred"
  store i1 0, i1* %"$64pred"
  ret void
B66.if:
  ret void
B66.endif:
  br i1 %".121", label %"B66.endif.if", label %"B66.endif.else"
B66.endif.if:
  %".126" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96", i32 0, i32 3
  %".127" = load i64*, i64** %".126"
  store i64 0, i64* %".127"
  br label %"B66.endif.endif"
B66.endif.else:
  %".130" = srem i64 %".118", %".104"
  %".131" = sub i64 0, %".130"
  %".132" = select  i1 %".119", i64 %".130", i64 %".131"
  %".133" = icmp sgt i64 %".132", 0
  %".134" = sdiv i64 %".118", %".104"
  %".135" = select  i1 %".133", i64 1, i64 0
  %".136" = add i64 %".134", %".135"
  %".137" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96", i32 0, i32 3
  %".138" = load i64*, i64** %".137"
  store i64 %".136", i64* %".138"
  br label %"B66.endif.endif"
B66.endif.endif:
  %".141" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".96"
  %".143" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %"$phi170.0"
  store {i64*, i64, i64, i64*} %".141", {i64*, i64, i64, i64*}* %"$phi170.0"
  br label %"B170"
B170.if:
  %".161" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".150", i32 0, i32 0
  %".162" = load i64*, i64** %".161"
  %".163" = load i64, i64* %".162"
  %".164" = getelementptr inbounds {i64, i1}, {i64, i1}* %".147", i32 0, i32 0
  store i64 %".163", i64* %".164"
  %".166" = sub nsw i64 %".156", 1
  store i64 %".166", i64* %".155"
  %".168" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".150", i32 0, i32 2
  %".169" = load i64, i64* %".168"
  %".170" = add i64 %".163", %".169"
  %".171" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".150", i32 0, i32 0
  %".172" = load i64*, i64** %".171"
  store i64 %".170", i64* %".172"
  br label %"B170.endif"
B170.endif:
  %".175" = load {i64, i1}, {i64, i1}* %".147"
  store {i64, i1} zeroinitializer, {i64, i1}* %".176"
  store {i64, i1} %".175", {i64, i1}* %".176"
  %".180" = getelementptr inbounds {i64, i1}, {i64, i1}* %".176", i32 0, i32 0
  %".181" = load i64, i64* %".180"
  store {i64, i1} zeroinitializer, {i64, i1}* %".182"
  store {i64, i1} %".175", {i64, i1}* %".182"
  %".186" = getelementptr inbounds {i64, i1}, {i64, i1}* %".182", i32 0, i32 1
  %".187" = load i1, i1* %".186"
  %".189" = load i1, i1* %"$170for_iter.3"
  store i1 %".187", i1* %"$170for_iter.3"
  %".192" = load i64, i64* %"$phi172.1"
  store i64 %".181", i64* %"$phi172.1"
  %".194" = load i1, i1* %"$170for_iter.3"
  br i1 %".194", label %"B172", label %"B210"
B210.if:
  ret void
B210.endif:
  br i1 %".321", label %"B210.endif.if", label %"B210.endif.else"
B210.endif.if:
  %".326" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296", i32 0, i32 3
  %".327" = load i64*, i64** %".326"
  store i64 0, i64* %".327"
  br label %"B210.endif.endif"
B210.endif.else:
  %".330" = srem i64 %".318", %".304"
  %".331" = sub i64 0, %".330"
  %".332" = select  i1 %".319", i64 %".330", i64 %".331"
  %".333" = icmp sgt i64 %".332", 0
  %".334" = sdiv i64 %".318", %".304"
  %".335" = select  i1 %".333", i64 1, i64 0
  %".336" = add i64 %".334", %".335"
  %".337" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296", i32 0, i32 3
  %".338" = load i64*, i64** %".337"
  store i64 %".336", i64* %".338"
  br label %"B210.endif.endif"
B210.endif.endif:
  %".341" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".296"
  %".343" = load {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %"$phi270.0"
  store {i64*, i64, i64, i64*} %".341", {i64*, i64, i64, i64*}* %"$phi270.0"
  br label %"B270"
B270.if:
  %".361" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".350", i32 0, i32 0
  %".362" = load i64*, i64** %".361"
  %".363" = load i64, i64* %".362"
  %".364" = getelementptr inbounds {i64, i1}, {i64, i1}* %".347", i32 0, i32 0
  store i64 %".363", i64* %".364"
  %".366" = sub nsw i64 %".356", 1
  store i64 %".366", i64* %".355"
  %".368" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".350", i32 0, i32 2
  %".369" = load i64, i64* %".368"
  %".370" = add i64 %".363", %".369"
  %".371" = getelementptr inbounds {i64*, i64, i64, i64*}, {i64*, i64, i64, i64*}* %".350", i32 0, i32 0
  %".372" = load i64*, i64** %".371"
  store i64 %".370", i64* %".372"
  br label %"B270.endif"
B270.endif:
  %".375" = load {i64, i1}, {i64, i1}* %".347"
  store {i64, i1} zeroinitializer, {i64, i1}* %".376"
  store {i64, i1} %".375", {i64, i1}* %".376"
  %".380" = getelementptr inbounds {i64, i1}, {i64, i1}* %".376", i32 0, i32 0
  %".381" = load i64, i64* %".380"
  store {i64, i1} zeroinitializer, {i64, i1}* %".382"
  store {i64, i1} %".375", {i64, i1}* %".382"
  %".386" = getelementptr inbounds {i64, i1}, {i64, i1}* %".382", i32 0, i32 1
  %".387" = load i1, i1* %".386"
  %".389" = load i1, i1* %"$270for_iter.3"
  store i1 %".387", i1* %"$270for_iter.3"
  %".392" = load i64, i64* %"$phi272.1"
  store i64 %".381", i64* %"$phi272.1"
  %".394" = load i1, i1* %"$270for_iter.3"
  br i1 %".394", label %"B272", label %"B316"
B272.if:
  br label %"B272.endif"
B272.endif:
  %".438" = fdiv double %".433", %".434"
  %".439" = load double, double* %"acc.2"
  %".440" = fadd double %".439", %".438"
  %".441" = load double, double* %"acc.2"
  store double %".440", double* %"acc.2"
  br label %"B270"
}

declare i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()

declare i32 @"llvm.nvvm.read.ptx.sreg.ntid.x"()

declare i32 @"llvm.nvvm.read.ptx.sreg.ctaid.x"()

@"llvm.used" = appending global [1 x i8*] [i8* bitcast (void (i8*, i8*, i64, i64, float*, i64, i64, i8*, i8*, i64, i64, float*, i64, i64)* @"_ZN8__main__11local_arrayB2v4B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIfLi1E1A7mutable7alignedE5ArrayIfLi1E1A7mutable7alignedE" to i8*)], section "llvm.metadata"
!nvvmir.version = !{ !0 }
!nvvm.annotations = !{ !3 }
!0 = !{ i32 2, i32 0, i32 3, i32 2 }
!1 = !{ !"branch_weights", i32 1, i32 99 }
!2 = !{ i64 0, i64 9223372036854775807 }
!3 = !{ void (i8*, i8*, i64, i64, float*, i64, i64, i8*, i8*, i64, i64, float*, i64, i64)* @"_ZN8__main__11local_arrayB2v4B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIfLi1E1A7mutable7alignedE5ArrayIfLi1E1A7mutable7alignedE", !"kernel", i32 1 }