#pragma once
// cuda-compile: printf is built into device code; nothing else of stdio is.
