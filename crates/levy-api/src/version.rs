//! API versions, selected by the `X-API-Version` header.

/// An API version of the interface. Ordered: a later version compares greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApiVersion {
    /// `2024-09-01`, the base version and the default when the header is absent.
    V2024_09_01,
    /// `2025-05-12`: customer types, tax ids, 32 currencies, `automatic_tax`, origin address.
    V2025_05_12,
    /// `2026-01-01`: extra jurisdiction fields and the flat error format.
    V2026_01_01,
    /// `2026-03-01`: IP resolution, `transacted_at`, the fallback customer type.
    V2026_03_01,
}

impl ApiVersion {
    /// Every version, oldest first.
    pub const ALL: [ApiVersion; 4] = [
        ApiVersion::V2024_09_01,
        ApiVersion::V2025_05_12,
        ApiVersion::V2026_01_01,
        ApiVersion::V2026_03_01,
    ];

    /// Parses the header's value exactly (`2026-03-01`).
    pub fn parse(s: &str) -> Option<ApiVersion> {
        ApiVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The header's value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V2024_09_01 => "2024-09-01",
            ApiVersion::V2025_05_12 => "2025-05-12",
            ApiVersion::V2026_01_01 => "2026-01-01",
            ApiVersion::V2026_03_01 => "2026-03-01",
        }
    }

    /// Whether errors use the flat `{code, type, message}` format (2026-01-01 and later).
    pub fn flat_errors(self) -> bool {
        self >= ApiVersion::V2026_01_01
    }
}
