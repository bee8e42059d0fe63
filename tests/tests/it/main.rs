//! The end-to-end tests, one binary: the nvcc corpus, fault injection and
//! the FFI type check. `stress.rs` stays a binary of its own, as it
//! measures the whole process's memory and open handles.

mod corpus;
mod fatbin_oracle;
mod faults;
mod ffi_types;
mod isolation;
mod library_corpus;
