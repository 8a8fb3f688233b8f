//! Spatial points as Neo4j and FalkorDB define them: 2D or 3D, in a Cartesian or the WGS-84
//! geographic coordinate reference system (CRS). A point is a property value like a number: stored,
//! compared for equality, ordered by `ORDER BY`, and measured by `point.distance` (Pythagoras for
//! Cartesian points; the haversine over Neo4j's spherical earth for geographic ones, in meters).

use std::cmp::Ordering;
use std::fmt;

/// Neo4j's earth radius for the haversine, in meters (`point.distance` between Copenhagen's
/// station and Malmö's office is 27,842 m with it, as Neo4j's manual shows).
pub const EARTH_RADIUS_METERS: f64 = 6_378_140.0;

/// A coordinate reference system. The order is the sort order of points across systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Crs {
    /// `cartesian`, SRID 7203: `x`, `y`.
    Cartesian,
    /// `cartesian-3d`, SRID 9157: `x`, `y`, `z`.
    Cartesian3D,
    /// `wgs-84`, SRID 4326: `longitude` (`x`), `latitude` (`y`), in degrees.
    Wgs84,
    /// `wgs-84-3d`, SRID 4979: `longitude`, `latitude`, `height` (`z`, meters).
    Wgs84_3D,
}

impl Crs {
    const ALL: [Crs; 4] = [Crs::Cartesian, Crs::Cartesian3D, Crs::Wgs84, Crs::Wgs84_3D];

    /// The CRS's name, as `p.crs` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Crs::Cartesian => "cartesian",
            Crs::Cartesian3D => "cartesian-3d",
            Crs::Wgs84 => "wgs-84",
            Crs::Wgs84_3D => "wgs-84-3d",
        }
    }

    /// The EPSG / SRID code, as `p.srid` gives it.
    pub fn srid(self) -> i64 {
        match self {
            Crs::Cartesian => 7203,
            Crs::Cartesian3D => 9157,
            Crs::Wgs84 => 4326,
            Crs::Wgs84_3D => 4979,
        }
    }

    /// The CRS a name gives, in any case (`WGS-84-2D` too, as Neo4j's manual spells it).
    pub fn named(name: &str) -> Option<Crs> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "wgs-84-2d" => Some(Crs::Wgs84),
            "cartesian-2d" => Some(Crs::Cartesian),
            _ => Crs::ALL.into_iter().find(|c| c.name() == lower),
        }
    }

    /// The CRS an SRID gives.
    pub fn of_srid(srid: i64) -> Option<Crs> {
        Crs::ALL.into_iter().find(|c| c.srid() == srid)
    }

    /// Three coordinates rather than two.
    pub fn is_3d(self) -> bool {
        matches!(self, Crs::Cartesian3D | Crs::Wgs84_3D)
    }

    /// Longitude and latitude rather than `x` and `y`.
    pub fn is_geographic(self) -> bool {
        matches!(self, Crs::Wgs84 | Crs::Wgs84_3D)
    }

    fn with_dimensions(geographic: bool, three: bool) -> Crs {
        match (geographic, three) {
            (false, false) => Crs::Cartesian,
            (false, true) => Crs::Cartesian3D,
            (true, false) => Crs::Wgs84,
            (true, true) => Crs::Wgs84_3D,
        }
    }
}

/// A point that cannot be made, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpatialError(pub String);

impl fmt::Display for SpatialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpatialError {}

fn err<T>(text: impl Into<String>) -> Result<T, SpatialError> {
    Err(SpatialError(text.into()))
}

/// A point: its CRS and its coordinates, finite and (geographic) in range; `z` is 0 in 2D.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    crs: Crs,
    coords: [f64; 3],
}

/// The keys of a `point({…})` map, as given (each already a number).
#[derive(Clone, Debug, Default)]
#[allow(missing_docs)] // Reason: each field is the key of its name.
pub struct PointFields {
    pub x: Option<f64>,
    pub y: Option<f64>,
    pub z: Option<f64>,
    pub longitude: Option<f64>,
    pub latitude: Option<f64>,
    pub height: Option<f64>,
    pub crs: Option<String>,
    pub srid: Option<i64>,
}

impl PointFields {
    /// The coordinate a key (lower case) names, to fill; `None` for `crs`, `srid` and others.
    pub fn coordinate(&mut self, key: &str) -> Option<&mut Option<f64>> {
        Some(match key {
            "x" => &mut self.x,
            "y" => &mut self.y,
            "z" => &mut self.z,
            "longitude" => &mut self.longitude,
            "latitude" => &mut self.latitude,
            "height" => &mut self.height,
            _ => return None,
        })
    }
}

impl Point {
    /// A point from its CRS and coordinates (`z` ignored in 2D); refuses what is not finite and,
    /// for a geographic CRS, a longitude outside [-180, 180] or a latitude outside [-90, 90].
    pub fn new(crs: Crs, x: f64, y: f64, z: f64) -> Result<Point, SpatialError> {
        let z = if crs.is_3d() { z } else { 0.0 };
        if !(x.is_finite() && y.is_finite() && z.is_finite()) {
            return err(format!("a {} point's coordinates must be finite numbers", crs.name()));
        }
        if crs.is_geographic() {
            if !(-180.0..=180.0).contains(&x) {
                return err(format!("longitude should be within [-180, 180], got {x}"));
            }
            if !(-90.0..=90.0).contains(&y) {
                return err(format!("latitude should be within [-90, 90], got {y}"));
            }
        }
        // One zero: `-0.0` and `0.0` are the same coordinate (for equality and for hashing).
        let fix = |c: f64| if c == 0.0 { 0.0 } else { c };
        Ok(Point { crs, coords: [fix(x), fix(y), fix(z)] })
    }

    /// The point a map's keys describe, by Neo4j's rules: `x`/`y`[/`z`] or `longitude`/`latitude`
    /// [/`height`], the CRS inferred from them or named by `crs` or `srid` (which must agree).
    pub fn from_fields(f: &PointFields) -> Result<Point, SpatialError> {
        let named = match (&f.crs, f.srid) {
            (Some(name), srid) => {
                let Some(crs) = Crs::named(name) else {
                    return err(format!("unknown coordinate reference system `{name}` (cartesian, cartesian-3d, wgs-84, wgs-84-3d)"));
                };
                if srid.is_some_and(|s| s != crs.srid()) {
                    return err(format!("crs `{name}` and srid {} name different coordinate reference systems", srid.unwrap_or_default()));
                }
                Some(crs)
            }
            (None, Some(srid)) => match Crs::of_srid(srid) {
                Some(crs) => Some(crs),
                None => return err(format!("unknown srid {srid} (7203, 9157, 4326, 4979)")),
            },
            (None, None) => None,
        };
        let cartesian = f.x.is_some() || f.y.is_some() || f.z.is_some();
        let geographic = f.longitude.is_some() || f.latitude.is_some() || f.height.is_some();
        let (x, y, z) = match (cartesian, geographic) {
            (true, true) => return err("a point is given by x, y[, z] or by longitude, latitude[, height], not both"),
            (false, false) => return err("a point needs x and y, or longitude and latitude"),
            (true, false) => (f.x, f.y, f.z),
            (false, true) => (f.longitude, f.latitude, f.height),
        };
        let (Some(x), Some(y)) = (x, y) else {
            return err(if cartesian { "a point needs both x and y" } else { "a point needs both longitude and latitude" });
        };
        let crs = match named {
            Some(crs) if geographic && !crs.is_geographic() => {
                return err(format!("longitude and latitude describe a geographic point, not a {} one", crs.name()));
            }
            Some(crs) if crs.is_3d() != z.is_some() => {
                return err(format!(
                    "a {} point has {} coordinates, given {}",
                    crs.name(),
                    if crs.is_3d() { 3 } else { 2 },
                    if z.is_some() { 3 } else { 2 }
                ));
            }
            Some(crs) => crs,
            None => Crs::with_dimensions(geographic, z.is_some()),
        };
        Point::new(crs, x, y, z.unwrap_or(0.0))
    }

    /// The coordinate reference system.
    pub fn crs(&self) -> Crs {
        self.crs
    }

    /// `x` (a geographic point's longitude).
    pub fn x(&self) -> f64 {
        self.coords[0]
    }

    /// `y` (a geographic point's latitude).
    pub fn y(&self) -> f64 {
        self.coords[1]
    }

    /// `z` (a geographic point's height), when the point has three coordinates.
    pub fn z(&self) -> Option<f64> {
        self.crs.is_3d().then_some(self.coords[2])
    }

    /// A field as `p.key` reads it; `None` when this point has no such field.
    pub fn field(&self, key: &str) -> Option<Field> {
        let geo = self.crs.is_geographic();
        Some(match key {
            "x" => Field::Float(self.x()),
            "y" => Field::Float(self.y()),
            "z" => Field::Float(self.z()?),
            "longitude" if geo => Field::Float(self.x()),
            "latitude" if geo => Field::Float(self.y()),
            "height" if geo => Field::Float(self.z()?),
            "crs" => Field::Str(self.crs.name()),
            "srid" => Field::Int(self.crs.srid()),
            _ => return None,
        })
    }

    /// The fields this point has, for an error naming them.
    pub fn field_names(&self) -> &'static str {
        match self.crs {
            Crs::Cartesian => "x, y, crs, srid",
            Crs::Cartesian3D => "x, y, z, crs, srid",
            Crs::Wgs84 => "longitude, latitude, x, y, crs, srid",
            Crs::Wgs84_3D => "longitude, latitude, height, x, y, z, crs, srid",
        }
    }

    /// The distance to `other`: `None` across coordinate reference systems. Cartesian points by
    /// Pythagoras, in their unit; geographic ones in meters by the haversine on a sphere of
    /// `EARTH_RADIUS_METERS` (in 3D at the points' mean height, then Pythagoras with the height
    /// difference, as Neo4j does).
    pub fn distance(&self, other: &Point) -> Option<f64> {
        if self.crs != other.crs {
            return None;
        }
        let [x1, y1, z1] = self.coords;
        let [x2, y2, z2] = other.coords;
        Some(if self.crs.is_geographic() {
            let radius = EARTH_RADIUS_METERS + f64::midpoint(z1, z2);
            let (phi1, phi2) = (y1.to_radians(), y2.to_radians());
            let dphi = phi2 - phi1;
            let dlambda = (x2 - x1).to_radians();
            let a = (dphi / 2.0).sin().powi(2) + phi1.cos() * phi2.cos() * (dlambda / 2.0).sin().powi(2);
            let arc = 2.0 * radius * a.sqrt().atan2((1.0 - a).max(0.0).sqrt());
            arc.hypot(z2 - z1)
        } else {
            ((x2 - x1).powi(2) + (y2 - y1).powi(2) + (z2 - z1).powi(2)).sqrt()
        })
    }

    /// Whether this point lies in the box from `lower_left` to `upper_right`, edges included:
    /// `None` unless all three share a CRS. A geographic box whose lower-left longitude is east of
    /// its upper-right one crosses the 180th meridian; a box upside down holds nothing.
    pub fn within_bbox(&self, lower_left: &Point, upper_right: &Point) -> Option<bool> {
        if self.crs != lower_left.crs || self.crs != upper_right.crs {
            return None;
        }
        let within = |i: usize| (lower_left.coords[i]..=upper_right.coords[i]).contains(&self.coords[i]);
        let x_ok = if self.crs.is_geographic() && lower_left.x() > upper_right.x() {
            self.x() >= lower_left.x() || self.x() <= upper_right.x()
        } else {
            within(0)
        };
        Some(x_ok && within(1) && (!self.crs.is_3d() || within(2)))
    }

    /// The order of `ORDER BY` among points: by CRS, then coordinates.
    pub fn order(&self, other: &Point) -> Ordering {
        self.crs.cmp(&other.crs).then_with(|| {
            self.coords.iter().zip(other.coords.iter()).map(|(a, b)| a.total_cmp(b)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
        })
    }

    /// The coordinates' bits and the CRS, for hashing (equal points hash alike: one zero).
    pub fn hash_key(&self) -> (Crs, [u64; 3]) {
        (self.crs, self.coords.map(f64::to_bits))
    }

    /// The map `point()` takes for this point, as `(key, value)` pairs: `crs` then `x`, `y`[, `z`]
    /// or `longitude`, `latitude`[, `height`]. What JSON and the clients see.
    pub fn map_fields(&self) -> Vec<(&'static str, PointMapValue)> {
        let names: [&'static str; 3] = if self.crs.is_geographic() { ["longitude", "latitude", "height"] } else { ["x", "y", "z"] };
        let n = if self.crs.is_3d() { 3 } else { 2 };
        let mut out = vec![("crs", PointMapValue::Str(self.crs.name()))];
        out.extend(names.iter().zip(self.coords.iter()).take(n).map(|(k, c)| (*k, PointMapValue::Float(*c))));
        out
    }
}

/// A value of a point's map form.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)] // Reason: the variants are the types they name.
pub enum PointMapValue {
    Str(&'static str),
    Float(f64),
}

/// One field of a point.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)] // Reason: the variants are the types they name.
pub enum Field {
    Float(f64),
    Int(i64),
    Str(&'static str),
}

/// Neo4j's text: `point({x: 12.78, y: 56.7, crs: 'wgs-84'})` (what `toString` gives, and a query
/// can read back).
impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Floats as the language prints them (`format!("{f:?}")`, as `toString` does).
        let num = |c: f64| format!("{c:?}");
        write!(f, "point({{x: {}, y: {}", num(self.x()), num(self.y()))?;
        if let Some(z) = self.z() {
            write!(f, ", z: {}", num(z))?;
        }
        write!(f, ", crs: '{}'}})", self.crs.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(longitude: f64, latitude: f64) -> Point {
        Point::from_fields(&PointFields { longitude: Some(longitude), latitude: Some(latitude), ..PointFields::default() }).unwrap()
    }

    #[test]
    fn the_manuals_distance() {
        // Neo4j's manual: Copenhagen's station to Malmö's office, rounded.
        let d = geo(12.564_590, 55.672_874).distance(&geo(12.994_341, 55.611_784)).unwrap();
        assert!((d.round() - 27_842.0).abs() < f64::EPSILON, "{d}");
        let a = Point::new(Crs::Cartesian, 2.3, 4.5, 0.0).unwrap();
        let b = Point::new(Crs::Cartesian, 1.1, 5.4, 0.0).unwrap();
        assert!((a.distance(&b).unwrap() - 1.5).abs() < 1e-12);
        assert_eq!(a.distance(&geo(1.0, 2.0)), None);
    }

    #[test]
    fn fields_infer_and_check_the_crs() {
        let f = |x: Option<f64>, y: Option<f64>, z: Option<f64>, crs: Option<&str>, srid: Option<i64>| {
            Point::from_fields(&PointFields { x, y, z, crs: crs.map(str::to_owned), srid, ..PointFields::default() })
        };
        assert_eq!(f(Some(1.0), Some(2.0), None, None, None).unwrap().crs(), Crs::Cartesian);
        assert_eq!(f(Some(1.0), Some(2.0), Some(3.0), None, None).unwrap().crs(), Crs::Cartesian3D);
        assert_eq!(f(Some(1.0), Some(2.0), None, Some("WGS-84"), None).unwrap().crs(), Crs::Wgs84);
        assert_eq!(f(Some(1.0), Some(2.0), Some(3.0), None, Some(4979)).unwrap().crs(), Crs::Wgs84_3D);
        assert!(f(Some(1.0), Some(2.0), None, Some("cartesian-3d"), None).is_err());
        assert!(f(Some(1.0), Some(2.0), None, Some("wgs-84"), Some(7203)).is_err());
        assert!(f(Some(1.0), None, None, None, None).is_err());
        assert!(f(Some(200.0), Some(2.0), None, Some("wgs-84"), None).is_err());
        assert!(Point::from_fields(&PointFields { x: Some(1.0), latitude: Some(2.0), ..PointFields::default() }).is_err());
    }

    #[test]
    fn text_and_fields() {
        assert_eq!(geo(12.78, 56.7).to_string(), "point({x: 12.78, y: 56.7, crs: 'wgs-84'})");
        let p = Point::new(Crs::Cartesian3D, 1.0, -0.0, 1e20).unwrap();
        assert_eq!(p.to_string(), "point({x: 1.0, y: 0.0, z: 1e20, crs: 'cartesian-3d'})");
        assert_eq!(p.field("latitude"), None);
        assert_eq!(geo(3.0, 4.0).field("latitude"), Some(Field::Float(4.0)));
        assert_eq!(geo(3.0, 4.0).field("height"), None);
    }

    #[test]
    fn a_box_across_the_date_line() {
        let (ll, ur) = (geo(170.0, -10.0), geo(-170.0, 10.0));
        assert_eq!(geo(175.0, 0.0).within_bbox(&ll, &ur), Some(true));
        assert_eq!(geo(-175.0, 0.0).within_bbox(&ll, &ur), Some(true));
        assert_eq!(geo(0.0, 0.0).within_bbox(&ll, &ur), Some(false));
        assert_eq!(geo(175.0, 0.0).within_bbox(&ur, &ll), Some(false));
    }
}
