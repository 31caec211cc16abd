//! The Tennessee table: a few hand-checkable rates that the API, server, C ABI tests and
//! the benches compute their expected values from.
//!
//! What [`Tennessee::default`] builds (jurisdiction codes in backticks):
//!
//! | place | jurisdictions | `GENERAL_MERCHANDISE` | `FOOD` |
//! |---|---|---|---|
//! | ZIP 37203 (Nashville) | Tennessee `47` + Davidson County `47037` | 7% + 2.25% = 9.25% | 4% + 2.25% = 6.25% |
//! | ZIP 37201 (Nashville) | Tennessee `47` + Nashville city `4752006` | 7% + 2.25% = 9.25% | 4% + 2.25% = 6.25% |
//! | anywhere else in TN (region US-TN) | Tennessee `47` | 7% | 4% |
//!
//! So $100.00 (10000 cents) of general merchandise owes 700 + 225 = 925 cents in 37203 or
//! 37201, and 700 cents elsewhere in Tennessee.
//!
//! - Tax codes: `GENERAL_MERCHANDISE`; `CLOTHING` and `FOOD`, children of it. `CLOTHING`
//!   has no rules of its own and is taxed as general merchandise. Each tax code is also a
//!   category of the same name ([`Tennessee::c_abi`] names the clothing code differently).
//! - The state's rules are "GENERAL STATE SALES TAX" (7%) and "STATE FOOD TAX" (4%), its
//!   authority "TENNESSEE DEPARTMENT OF REVENUE"; Davidson's rule is "GENERAL COUNTY LOCAL
//!   SALES TAX" (authority "DAVIDSON COUNTY"); the city's "GENERAL CITY LOCAL SALES TAX"
//!   (authority "METRO NASHVILLE").
//! - A taxability matrix for Tennessee (`matrix`, on by default) knows clothing and food at
//!   the state and local levels, so an answer in 37203 is `FULL` for every code.
//! - The region's most populous postal code (for approximate IP resolution) is 37203; ZIPs
//!   37203 and 37201 have a population of 1000 each.
//! - IPv4 10.0.0.0/24 and 192.0.2.0/24 (TEST-NET-1) are Nashville, TN 37203; 10.0.1.0/24 is
//!   Tennessee without a postal code; nothing else (198.51.100.0/24, TEST-NET-2, say) is
//!   placed.

use std::sync::Arc;

use levy_core::{
    AlignedBytes, AnyBytes, AnyTable, Date, Decimal, IpLocationSpec, JurisdictionId,
    JurisdictionSpec, Level, RuleSpec, Table, TableBuilder, TaxType, TaxabilityCellSpec,
    TaxabilityLevels, Treatment,
};

use crate::sale::MARCH_2026_UNIX;

/// The Tennessee table with its adjustable parts; [`Tennessee::default`] is the table the
/// module documentation describes.
#[derive(Clone, Debug)]
pub struct Tennessee {
    /// The state's rate on general merchandise: 7%.
    pub state_rate: Decimal,
    /// The Nashville city rate at ZIP 37201: 2.25%.
    pub city_rate: Decimal,
    /// The tax code of the `CLOTHING` category: `CLOTHING`.
    pub clothing_code: &'static str,
    /// The table's build time in Unix seconds: 0.
    pub build_time: i64,
    /// Whether the table carries a taxability matrix for Tennessee: yes, clothing taxed at
    /// the general rate and food at its own (Tenn. Code Ann. 67-6-202, 67-6-228), known at
    /// the state and local levels, so that every answer is as complete as its place.
    /// Without it every code but the root is unknown.
    pub matrix: bool,
}

impl Default for Tennessee {
    fn default() -> Self {
        Tennessee {
            state_rate: Decimal::new(7, 2),
            city_rate: Decimal::new(225, 4),
            clothing_code: "CLOTHING",
            build_time: 0,
            matrix: true,
        }
    }
}

/// The jurisdictions of a [`Tennessee`] builder, for tests that add rules or places.
#[derive(Clone, Copy, Debug)]
pub struct Jurisdictions {
    /// Tennessee `47`, the state.
    pub state: JurisdictionId,
    /// Davidson County `47037`, at ZIP 37203.
    pub davidson: JurisdictionId,
    /// Nashville city `4752006`, at ZIP 37201.
    pub nashville: JurisdictionId,
}

impl Tennessee {
    /// The table the C ABI tests (`crates/levy-ffi/tests/c`) check against: the default
    /// table, except that the `CLOTHING` category's tax code is `CLOTHING_GENERAL` and the
    /// build time is 2026-03-01T00:00:00Z.
    pub fn c_abi() -> Tennessee {
        Tennessee {
            clothing_code: "CLOTHING_GENERAL",
            build_time: MARCH_2026_UNIX,
            ..Tennessee::default()
        }
    }

    /// A builder holding the whole table, for a test that adds more to it before
    /// [`TableBuilder::build`] (with [`Tennessee::build_time`]).
    pub fn builder(&self) -> (TableBuilder, Jurisdictions) {
        let mut b = TableBuilder::new();
        self.add_tax_codes(&mut b);
        let js = add_jurisdictions(&mut b);
        self.add_rules(&mut b, &js);
        b.region("US", "TN", "TENNESSEE", &[js.state], "37203")
            .expect("region");
        if self.matrix {
            self.add_taxability_matrix(&mut b);
        }
        b.zip(37203, "TN", "NASHVILLE", &[js.state, js.davidson], 1000)
            .expect("zip");
        b.zip(37201, "TN", "NASHVILLE", &[js.state, js.nashville], 1000)
            .expect("zip");
        add_ip_ranges(&mut b);
        (b, js)
    }

    /// The tax codes `GENERAL_MERCHANDISE`, the clothing code and `FOOD` under it, and a
    /// category of each.
    fn add_tax_codes(&self, b: &mut TableBuilder) {
        b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
            .expect("tax code");
        b.tax_code(self.clothing_code, Some("GENERAL_MERCHANDISE"), "Clothing")
            .expect("tax code");
        b.tax_code("FOOD", Some("GENERAL_MERCHANDISE"), "Food")
            .expect("tax code");
        b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
        b.category("CLOTHING", self.clothing_code);
        b.category("FOOD", "FOOD");
    }

    /// The rate rules: the state's general and food rates, Davidson County's and the
    /// Nashville city's general rates.
    fn add_rules(&self, b: &mut TableBuilder, js: &Jurisdictions) {
        for (j, code, rate, description) in [
            (
                js.state,
                "GENERAL_MERCHANDISE",
                self.state_rate,
                "GENERAL STATE SALES TAX",
            ),
            (js.state, "FOOD", Decimal::new(4, 2), "STATE FOOD TAX"),
            (
                js.davidson,
                "GENERAL_MERCHANDISE",
                Decimal::new(225, 4),
                "GENERAL COUNTY LOCAL SALES TAX",
            ),
            (
                js.nashville,
                "GENERAL_MERCHANDISE",
                self.city_rate,
                "GENERAL CITY LOCAL SALES TAX",
            ),
        ] {
            b.rule(RuleSpec::flat(
                j,
                code,
                rate,
                Date::MIN,
                Date::MAX,
                description,
            ))
            .expect("rule");
        }
    }

    /// Tennessee's taxability matrix: clothing at the general rate and food at its own,
    /// known at every level.
    fn add_taxability_matrix(&self, b: &mut TableBuilder) {
        for (code, summary, source) in [
            (
                self.clothing_code,
                "general rate",
                "Tenn. Code Ann. 67-6-202",
            ),
            (
                "FOOD",
                "4% state, local in full",
                "Tenn. Code Ann. 67-6-228",
            ),
        ] {
            b.taxability_cell(TaxabilityCellSpec {
                country: "US".into(),
                region: "TN".into(),
                levels: TaxabilityLevels::ALL,
                scope: "all".into(),
                treatment: Treatment::Taxable,
                summary: summary.into(),
                codes: vec![code.into()],
                from: Date::MIN,
                to: Date::MAX,
                sale_at_most: None,
                label: String::new(),
                source: source.into(),
                as_of: Date::from_ymd(2026, 11, 26).expect("a day"),
                note: String::new(),
            })
            .expect("taxability cell");
        }
    }
}

/// The jurisdictions: the state of Tennessee, Davidson County and the Nashville city.
fn add_jurisdictions(b: &mut TableBuilder) -> Jurisdictions {
    let mut jurisdiction = |code: &str, name: &str, level, authority: &str| {
        b.jurisdiction(JurisdictionSpec {
            code: code.into(),
            name: name.into(),
            level,
            country: "US".into(),
            region: "TN".into(),
            authority: authority.into(),
            tax_type: TaxType::Sales,
        })
        .expect("jurisdiction")
    };
    let state = jurisdiction(
        "47",
        "TENNESSEE",
        Level::State,
        "TENNESSEE DEPARTMENT OF REVENUE",
    );
    let davidson = jurisdiction("47037", "DAVIDSON", Level::County, "DAVIDSON COUNTY");
    let nashville = jurisdiction("4752006", "NASHVILLE", Level::City, "METRO NASHVILLE");
    Jurisdictions {
        state,
        davidson,
        nashville,
    }
}

/// The IPv4 ranges: 10.0.0.0/24 and 192.0.2.0/24 in Nashville, TN 37203; 10.0.1.0/24 in
/// Tennessee without a postal code.
fn add_ip_ranges(b: &mut TableBuilder) {
    let place = |city: &str, postal: &str| IpLocationSpec {
        country: "US".into(),
        region: "TN".into(),
        city: city.into(),
        postal: postal.into(),
        approx_postal: String::new(),
        coordinates: None,
    };
    let v4 = |a: u8, b: u8, c: u8, d: u8| u32::from_be_bytes([a, b, c, d]);
    for (first, last, spec) in [
        (
            v4(10, 0, 0, 0),
            v4(10, 0, 0, 255),
            place("NASHVILLE", "37203"),
        ),
        (v4(10, 0, 1, 0), v4(10, 0, 1, 255), place("", "")),
        (
            v4(192, 0, 2, 0),
            v4(192, 0, 2, 255),
            place("NASHVILLE", "37203"),
        ),
    ] {
        b.ipv4_range(first, last, spec).expect("IP range");
    }
}

impl Tennessee {
    /// The table's bytes, as `levy build` would write them.
    pub fn bytes(&self) -> Vec<u8> {
        self.builder()
            .0
            .build(self.build_time)
            .expect("the Tennessee table builds")
    }

    /// The table, opened.
    pub fn table(&self) -> Arc<AnyTable> {
        open(&self.bytes())
    }
}

/// The default Tennessee table's bytes.
pub fn bytes() -> Vec<u8> {
    Tennessee::default().bytes()
}

/// The default Tennessee table, opened.
pub fn table() -> Arc<AnyTable> {
    Tennessee::default().table()
}

/// Opens table bytes (from [`Tennessee::bytes`] or a builder) the way a service holds a
/// table; panics when they are not a valid table.
pub fn open(bytes: &[u8]) -> Arc<AnyTable> {
    Arc::new(Table::open(AnyBytes::Owned(AlignedBytes::copy_from(bytes))).expect("the table opens"))
}
