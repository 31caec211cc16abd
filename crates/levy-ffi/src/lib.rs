//! levy-ffi (being written).
