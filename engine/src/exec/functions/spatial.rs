//! The spatial functions: `point({…})`, `point.distance` (and FalkorDB's and Neo4j 4's name for
//! it, `distance`) and `point.withinBBox`. The points themselves live in `crate::spatial`.

use engram_query::{Detail, QueryError};

use super::super::eval::{arg_error, type_error};
use super::super::value::Val;
use crate::spatial::{Point, PointFields};

/// Calls `name` if it is a spatial function (lower case); `None` when it is not.
pub(super) fn call_spatial(name: &str, args: &[Val]) -> Option<Result<Val, QueryError>> {
    let arg = |i: usize| args.get(i).unwrap_or(&Val::Null);
    Some(match name {
        "point" => construct(arg(0)),
        "point.distance" | "distance" => match (arg(0), arg(1)) {
            (Val::Null, _) | (_, Val::Null) => Ok(Val::Null),
            (Val::Point(a), Val::Point(b)) => Ok(a.distance(b).map_or(Val::Null, Val::Float)),
            (a, b) => Err(type_error(format!("{name}() expects two points, got {} and {}", a.kind(), b.kind()))),
        },
        "point.withinbbox" => match (arg(0), arg(1), arg(2)) {
            (Val::Null, _, _) | (_, Val::Null, _) | (_, _, Val::Null) => Ok(Val::Null),
            (Val::Point(p), Val::Point(ll), Val::Point(ur)) => Ok(p.within_bbox(ll, ur).map_or(Val::Null, Val::Bool)),
            (a, b, c) => Err(type_error(format!(
                "point.withinBBox() expects three points (the point, the lower-left and upper-right corners), got {}, {} and {}",
                a.kind(),
                b.kind(),
                c.kind()
            ))),
        },
        _ => return None,
    })
}

/// `point(map)`: null when the map or any of its point keys is null; other keys are ignored.
fn construct(arg: &Val) -> Result<Val, QueryError> {
    let m = match arg {
        Val::Null => return Ok(Val::Null),
        Val::Map(m) => m,
        other => {
            return Err(type_error(format!("point() expects a map such as {{longitude: 12.5, latitude: 55.6}}, got {}", other.kind())))
        }
    };
    let mut f = PointFields::default();
    for (key, v) in m.iter() {
        let lower = key.to_ascii_lowercase();
        if let Some(slot) = f.coordinate(&lower) {
            *slot = Some(match v {
                Val::Null => return Ok(Val::Null),
                #[allow(clippy::cast_precision_loss)] // Reason: a coordinate is a float; Neo4j converts likewise.
                Val::Int(i) => *i as f64,
                Val::Float(x) => *x,
                other => return Err(type_error(format!("point(): {key} must be a number, got {}", other.kind()))),
            });
            continue;
        }
        match (lower.as_str(), v) {
            ("crs" | "srid", Val::Null) => return Ok(Val::Null),
            ("crs", Val::Str(s)) => f.crs = Some(s.to_string()),
            ("srid", Val::Int(i)) => f.srid = Some(*i),
            ("crs", other) => return Err(type_error(format!("point(): crs must be a string, got {}", other.kind()))),
            ("srid", other) => return Err(type_error(format!("point(): srid must be an integer, got {}", other.kind()))),
            _ => {}
        }
    }
    Point::from_fields(&f).map(Val::point).map_err(|e| arg_error(Detail::InvalidArgumentValue, format!("point(): {e}")))
}
