//! Session files: a world (field settings and generator) and a list of ops, as JSON.
//!
//! The format is specified in `docs/session-format.md`. Version 1 is the current one; every
//! later version must keep loading older files.

use std::path::{Path, PathBuf};

use loam_field::{FieldSettings, Generator};
pub use loam_session::generator::{GeneratorSpec, GeneratorSpecError};
use serde::{Deserialize, Serialize};

use crate::session_blocks::BlocksSpec;
use crate::timeline::{self, TimedOp, ViewerPath, WorldSpec};

/// The `format` value every session carries.
pub const FORMAT: &str = "loam-session";

/// The newest session version this build reads. Version 2 added `world`, `viewers` and op
/// times (`t`); version 3 added `blocks`; older files read unchanged.
pub const VERSION: u32 = 3;

/// A session could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The file could not be read.
    #[error("cannot read {path:?}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, a missing or unknown field, or a value of the wrong type.
    #[error("{path:?} is not a valid session: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What serde said, with line and column.
        message: String,
    },
    /// `format` is not `"loam-session"`.
    #[error("{path:?} has format {found:?}, expected \"loam-session\"")]
    WrongFormat {
        /// The file.
        path: PathBuf,
        /// The format found.
        found: String,
    },
    /// `version` is newer than this build reads.
    #[error("{path:?} is session version {found}; this build reads versions 1 to {max}")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u64,
        /// The newest version this build reads.
        max: u32,
    },
    /// The generator could not be built (a bad heightmap, bad settings).
    #[error(transparent)]
    Generator(#[from] GeneratorSpecError),
}

/// A session (versions 1 and 2).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// Always `"loam-session"`.
    pub format: String,
    /// The format version, 1 or 2.
    pub version: u32,
    /// Field settings; every one has a default.
    #[serde(default)]
    pub field: FieldSettings,
    /// The base terrain.
    pub generator: GeneratorSpec,
    /// The chunk pipeline's settings and the frame length (version 2).
    #[serde(default)]
    pub world: WorldSpec,
    /// Viewers moving along paths (version 2). None: one viewer standing at the first op's
    /// centre (or above the ground at the origin).
    #[serde(default)]
    pub viewers: Vec<ViewerPath>,
    /// The ops, applied in order, each at its time `t` (version 2) or one frame after the
    /// previous one.
    #[serde(default)]
    pub ops: Vec<TimedOp>,
    /// Where `loam render` and the editor put the camera (version 2). None: looking at the
    /// first op's centre from 24 m away and 12 m up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<CameraSpec>,
    /// Blocks: models, block ops and seconds of physics after the ops (version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<BlocksSpec>,
}

/// A camera pose in a session, world metres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraSpec {
    /// Eye position.
    pub position: [f64; 3],
    /// The point looked at; must differ from `position`.
    pub look_at: [f64; 3],
}

/// A loaded session: the parsed file and the generator it names.
pub struct Loaded {
    /// The parsed session.
    pub session: Session,
    /// The generator, heightmap decoded.
    pub generator: Generator,
    /// BLAKE3 of the heightmap file, if the session uses one.
    pub heightmap_blake3: Option<String>,
}

/// Reads and checks a session file, and builds its generator.
///
/// # Errors
/// [`SessionError`] for unreadable files, malformed JSON, unknown fields, another format, a
/// newer version, a bad heightmap or bad generator settings.
pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let text = std::fs::read_to_string(path).map_err(|source| SessionError::Read {
        path: path.into(),
        source,
    })?;
    let mut session = parse(&text, path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let (generator, heightmap_blake3) = session.generator.build(base)?;
    session.generator = session.generator.with_base(base);
    Ok(Loaded {
        session,
        generator,
        heightmap_blake3,
    })
}

/// Parses a session's text; `path` is only used in errors.
///
/// # Errors
/// As [`load`], for everything but files.
pub fn parse(text: &str, path: &Path) -> Result<Session, SessionError> {
    let invalid = |e: serde_json::Error| SessionError::Invalid {
        path: path.into(),
        message: e.to_string(),
    };
    // Format and version first, so a newer file says so instead of "unknown field".
    let head: serde_json::Value = serde_json::from_str(text).map_err(invalid)?;
    let Some(head) = head.as_object() else {
        return Err(SessionError::Invalid {
            path: path.into(),
            message: "the top level must be a JSON object".into(),
        });
    };
    let Some(format) = head.get("format").map(|v| v.as_str().unwrap_or_default()) else {
        return Err(SessionError::Invalid {
            path: path.into(),
            message: "missing field `format` (\"loam-session\")".into(),
        });
    };
    if format != FORMAT {
        return Err(SessionError::WrongFormat {
            path: path.into(),
            found: format.into(),
        });
    }
    let version = match head.get("version") {
        Some(v) => v
            .as_u64()
            .filter(|&v| v >= 1)
            .ok_or_else(|| SessionError::Invalid {
                path: path.into(),
                message: format!("`version` must be a positive integer, found {v}"),
            })?,
        None => {
            return Err(SessionError::Invalid {
                path: path.into(),
                message: "missing field `version`".into(),
            });
        }
    };
    if version > u64::from(VERSION) {
        return Err(SessionError::UnsupportedVersion {
            path: path.into(),
            found: version,
            max: VERSION,
        });
    }
    let session: Session = serde_json::from_str(text).map_err(invalid)?;
    let invalid = |message| SessionError::Invalid {
        path: path.into(),
        message,
    };
    timeline::validate(
        session.version,
        &session.ops,
        &session.viewers,
        &session.world,
    )
    .map_err(invalid)?;
    if let Some(c) = &session.camera {
        if session.version < 2 {
            return Err(invalid("`camera` needs \"version\": 2".into()));
        }
        let p = c.position.iter().chain(&c.look_at);
        if p.clone()
            .any(|v| !v.is_finite() || v.abs() > timeline::MAX_VIEWER_COORD)
            || c.position == c.look_at
        {
            return Err(invalid(format!(
                "camera: position {:?} and look_at {:?} must be finite, within ±{} m, and differ",
                c.position,
                c.look_at,
                timeline::MAX_VIEWER_COORD
            )));
        }
    }
    if let Some(b) = &session.blocks {
        if session.version < 3 {
            return Err(invalid("`blocks` needs \"version\": 3".into()));
        }
        b.validate().map_err(invalid)?;
        if b.after_ops > session.ops.len() {
            return Err(invalid(format!(
                "blocks.after_ops {} is more than the {} ops",
                b.after_ops,
                session.ops.len()
            )));
        }
    }
    // Every op's numbers, before anything runs (undo and redo are checked when applied).
    for (i, op) in session.ops.iter().enumerate() {
        op.op
            .validate(session.field.max_edit_radius)
            .map_err(|e| invalid(format!("op {i} ({}): {e}", op.op.kind())))?;
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_field::{CaveSettings, NoiseTerrainSettings};

    fn p(text: &str) -> Result<Session, SessionError> {
        parse(text, Path::new("t.json"))
    }

    #[test]
    fn minimal_session_uses_defaults() {
        let s = p(r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}}"#)
            .unwrap();
        assert_eq!(s.field, FieldSettings::default());
        assert!(s.ops.is_empty());
        assert!(matches!(s.generator, GeneratorSpec::Noise { .. }));
    }

    #[test]
    fn unknown_fields_are_refused_everywhere() {
        let cases = [
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "colour": 3}"#,
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise", "sead": 3}}"#,
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise", "terrain": {"sead": 3}}}"#,
            r#"{"format": "loam-session", "version": 1, "field": {"voxel": 1}, "generator": {"kind": "noise"}}"#,
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "ops": [{"kind": "sphere", "mode": "dig", "center": [0,0,0], "radius": 1, "colour": 2}]}"#,
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "noise"}, "ops": [{"kind": "cube", "mode": "dig", "center": [0,0,0], "radius": 1}]}"#,
            r#"{"format": "loam-session", "version": 1, "generator": {"kind": "volcano"}}"#,
        ];
        for c in cases {
            let e = p(c).unwrap_err();
            assert!(matches!(e, SessionError::Invalid { .. }), "{c}: {e}");
        }
        let e = p(cases[1]).unwrap_err().to_string();
        assert!(e.contains("sead"), "{e}");
    }

    /// The full example in docs/session-format.md parses, so the document stays true.
    #[test]
    fn documented_example_parses() {
        let doc = include_str!("../../../docs/session-format.md");
        let start = doc.find("```json\n").unwrap() + 8;
        let end = start + doc[start..].find("```").unwrap();
        let s = p(&doc[start..end]).unwrap();
        assert_eq!(s.ops.len(), 2);
        let GeneratorSpec::Noise { terrain, caves } = &s.generator else {
            panic!("noise")
        };
        assert_eq!((terrain.seed, caves.y_max), (7, 4.0));
        assert_eq!(
            *terrain,
            NoiseTerrainSettings {
                seed: 7,
                ..Default::default()
            }
        );
        assert_eq!(*caves, CaveSettings::default());
    }

    #[test]
    fn format_and_version_are_checked() {
        let e = p(r#"{"format": "loam-world", "version": 1, "generator": {"kind": "noise"}}"#)
            .unwrap_err();
        assert!(matches!(e, SessionError::WrongFormat { .. }));
        let e = p(r#"{"format": "loam-session", "version": 4, "generator": {"kind": "noise"}, "cameras": []}"#).unwrap_err();
        assert!(
            matches!(
                e,
                SessionError::UnsupportedVersion {
                    found: 4,
                    max: 3,
                    ..
                }
            ),
            "{e}"
        );
        let e = p(r#"{"format": "loam-session", "generator": {"kind": "noise"}}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `version`"), "{e}");
        for v in ["1.0", "\"1\"", "-1", "0"] {
            let text = format!(
                r#"{{"format": "loam-session", "version": {v}, "generator": {{"kind": "noise"}}}}"#
            );
            let e = p(&text).unwrap_err();
            assert!(e.to_string().contains("positive integer"), "{v}: {e}");
        }
        let e = p("[]").unwrap_err();
        assert!(e.to_string().contains("JSON object"), "{e}");
        let e = p(r#"{"format": "loam-session", "version": 2, "generator": {"kind": "noise"}, "blocks": {}}"#).unwrap_err();
        assert!(e.to_string().contains("version\": 3"), "{e}");
    }
}
