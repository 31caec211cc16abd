//! The USPS ZIP code nearest a point, within a state: how an IP range's coordinates become
//! the postal code that `ip_mode: approximate` resolves.
//!
//! Candidates are the active `STANDARD` ZIP codes of the `zipcodes` package (USPS data with
//! each ZIP's centroid); PO box, unique (single-organization) and military ZIPs are left out,
//! because a street delivery area is what a geolocated network is near. Distance is the
//! great-circle (haversine) distance; a tie goes to the lower ZIP, so the answer is
//! deterministic. Only ZIPs in the range's own state are candidates: the postal code given
//! always lies in the state the IP database names, even near a border.

use std::collections::HashMap;

/// One candidate: the centroid in radians and the ZIP.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    lat: f64,
    lon: f64,
    zip: &'static str,
}

/// Nearest-ZIP search over the USPS ZIP codes, one list per state, with the answers for
/// points already asked kept (IP databases repeat a city's coordinates across many ranges).
#[derive(Debug, Default)]
pub struct NearestZip {
    by_state: HashMap<&'static str, Vec<Candidate>>,
    known: HashMap<(String, i32, i32), Option<&'static str>>,
}

impl NearestZip {
    /// Loads the candidates from the `zipcodes` package.
    pub fn new() -> NearestZip {
        let mut by_state: HashMap<&'static str, Vec<Candidate>> = HashMap::new();
        for z in zipcodes::database() {
            if !z.active || z.zip_code_type != "STANDARD" {
                continue;
            }
            let (Ok(lat), Ok(lon)) = (z.lat.parse::<f64>(), z.long.parse::<f64>()) else {
                continue;
            };
            by_state
                .entry(z.state.as_str())
                .or_default()
                .push(Candidate {
                    lat: lat.to_radians(),
                    lon: lon.to_radians(),
                    zip: z.zip_code.as_str(),
                });
        }
        for list in by_state.values_mut() {
            list.sort_by(|a, b| a.zip.cmp(b.zip));
        }
        NearestZip {
            by_state,
            known: HashMap::new(),
        }
    }

    /// The ZIP code of `state` (a USPS code such as `TN`) nearest the point at
    /// `lat`/`lon` in millionths of a degree; `None` for a state with no candidates.
    pub fn nearest(&mut self, state: &str, lat: i32, lon: i32) -> Option<&'static str> {
        let key = (state.to_string(), lat, lon);
        if let Some(&z) = self.known.get(&key) {
            return z;
        }
        let found = self.by_state.get(state).and_then(|list| {
            let (plat, plon) = (
                (f64::from(lat) / 1e6).to_radians(),
                (f64::from(lon) / 1e6).to_radians(),
            );
            // Coordinates, not money: a float is the natural measure of a distance.
            let mut best: Option<(f64, &'static str)> = None;
            for c in list {
                let d = haversine(plat, plon, c.lat, c.lon);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, c.zip));
                }
            }
            best.map(|(_, z)| z)
        });
        self.known.insert(key, found);
        found
    }
}

/// The central angle between two points given in radians (the haversine formula); ordering
/// by it is ordering by great-circle distance.
fn haversine(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let a = ((lat2 - lat1) / 2.0).sin().powi(2)
        + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * a.sqrt().min(1.0).asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zip_centroid_is_its_own_nearest_zip() {
        let mut n = NearestZip::new();
        // The zipcodes package gives 37203 (Nashville, TN) the centroid 36.1504, -86.7916;
        // asked at that very point, the answer is 37203 itself.
        assert_eq!(n.nearest("TN", 36_150_400, -86_791_600), Some("37203"));
        // Asked again (from the cache): the same.
        assert_eq!(n.nearest("TN", 36_150_400, -86_791_600), Some("37203"));
    }

    #[test]
    fn the_answer_stays_in_the_state_asked() {
        let mut n = NearestZip::new();
        // A point in Texarkana, on the Texas-Arkansas line (33.4418, -94.0377). Worked out
        // by hand over the package's STANDARD ZIPs with the haversine formula: in Texas the
        // nearest is 75503 (2.9 miles), in Arkansas 71854 (9.3 miles), though 75503 is
        // nearer than any Arkansas ZIP.
        assert_eq!(n.nearest("TX", 33_441_800, -94_037_700), Some("75503"));
        assert_eq!(n.nearest("AR", 33_441_800, -94_037_700), Some("71854"));
        assert_eq!(n.nearest("ZZ", 0, 0), None);
    }
}
