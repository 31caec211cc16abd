//! levy-api (being written).
