//! levy-build (being written).
