//! levy-server (being written).
