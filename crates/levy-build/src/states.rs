//! US states, DC and territories: USPS abbreviation, FIPS code and name (FIPS PUB 5-2,
//! as the Census Bureau lists them).

/// (USPS abbreviation, two-digit state FIPS, name).
pub const STATES: &[(&str, &str, &str)] = &[
    ("AL", "01", "ALABAMA"),
    ("AK", "02", "ALASKA"),
    ("AZ", "04", "ARIZONA"),
    ("AR", "05", "ARKANSAS"),
    ("CA", "06", "CALIFORNIA"),
    ("CO", "08", "COLORADO"),
    ("CT", "09", "CONNECTICUT"),
    ("DE", "10", "DELAWARE"),
    ("DC", "11", "DISTRICT OF COLUMBIA"),
    ("FL", "12", "FLORIDA"),
    ("GA", "13", "GEORGIA"),
    ("HI", "15", "HAWAII"),
    ("ID", "16", "IDAHO"),
    ("IL", "17", "ILLINOIS"),
    ("IN", "18", "INDIANA"),
    ("IA", "19", "IOWA"),
    ("KS", "20", "KANSAS"),
    ("KY", "21", "KENTUCKY"),
    ("LA", "22", "LOUISIANA"),
    ("ME", "23", "MAINE"),
    ("MD", "24", "MARYLAND"),
    ("MA", "25", "MASSACHUSETTS"),
    ("MI", "26", "MICHIGAN"),
    ("MN", "27", "MINNESOTA"),
    ("MS", "28", "MISSISSIPPI"),
    ("MO", "29", "MISSOURI"),
    ("MT", "30", "MONTANA"),
    ("NE", "31", "NEBRASKA"),
    ("NV", "32", "NEVADA"),
    ("NH", "33", "NEW HAMPSHIRE"),
    ("NJ", "34", "NEW JERSEY"),
    ("NM", "35", "NEW MEXICO"),
    ("NY", "36", "NEW YORK"),
    ("NC", "37", "NORTH CAROLINA"),
    ("ND", "38", "NORTH DAKOTA"),
    ("OH", "39", "OHIO"),
    ("OK", "40", "OKLAHOMA"),
    ("OR", "41", "OREGON"),
    ("PA", "42", "PENNSYLVANIA"),
    ("RI", "44", "RHODE ISLAND"),
    ("SC", "45", "SOUTH CAROLINA"),
    ("SD", "46", "SOUTH DAKOTA"),
    ("TN", "47", "TENNESSEE"),
    ("TX", "48", "TEXAS"),
    ("UT", "49", "UTAH"),
    ("VT", "50", "VERMONT"),
    ("VA", "51", "VIRGINIA"),
    ("WA", "53", "WASHINGTON"),
    ("WV", "54", "WEST VIRGINIA"),
    ("WI", "55", "WISCONSIN"),
    ("WY", "56", "WYOMING"),
    ("AS", "60", "AMERICAN SAMOA"),
    ("GU", "66", "GUAM"),
    ("MP", "69", "NORTHERN MARIANA ISLANDS"),
    ("PR", "72", "PUERTO RICO"),
    ("VI", "78", "U.S. VIRGIN ISLANDS"),
];

/// FIPS and name of a state by USPS abbreviation.
pub fn by_abbr(abbr: &str) -> Option<(&'static str, &'static str)> {
    STATES.iter().find(|s| s.0 == abbr).map(|s| (s.1, s.2))
}

/// Abbreviation and name of a state by FIPS code.
pub fn by_fips(fips: &str) -> Option<(&'static str, &'static str)> {
    STATES.iter().find(|s| s.1 == fips).map(|s| (s.0, s.2))
}

/// Every state, DC and territory as (USPS abbreviation, FIPS code).
pub fn all() -> impl Iterator<Item = (&'static str, &'static str)> {
    STATES.iter().map(|s| (s.0, s.1))
}
