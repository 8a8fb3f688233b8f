//! Masking policies: what a role sees of PII, of tagged rows and of property values.
//!
//! A masking policy (`settings::StoredMask`) names what it masks and how, and the roles it
//! applies to. A principal holding none of its roles sees the value.
//! - `pii:KIND` (`email`, `phone`, `card`, `ip`) or `pii:*`: the spans the detector finds
//!   (`crate::pii`) in claim texts, string property values and evidence snippets and reasoning;
//! - `tag:KEY=VALUE` (or `tag:KEY`, any value): the whole text, every property value and the
//!   evidence text of a claim carrying that tag (its own or its evidence's messages':
//!   `crate::tags`), and every property value of an entity carrying it;
//! - `property:KEY`: that property's value on claims and entities; a `tag:` mask also masks the
//!   values of the property keys the workspace tags (the `property_tags` setting, the analogue of
//!   a warehouse's column tags: `{"phone": {"pii": "phone"}}`).
//!
//! Modes, from the least to the most strict: `hash` (`[HMAC:…]`, the first 8 bytes of an
//! HMAC-SHA256 under the database's secret: equal values give equal tokens, and without the
//! secret a dictionary of phone numbers cannot be hashed to match), `redact` (`[REDACTED:KIND]`,
//! the kind, tag value or key), `hide` (the span, the text or the property is left out). Where
//! several apply, the strictest wins; a tag mask on a row wins over span masks inside it.
//!
//! Enforcement: with row policies (`read::policy::Hidden`), once per state version, workspace and
//! rule set, every claim and entity of the workspace is masked and the rows that change are kept
//! (`Masked`); the view's accessors answer from them, so every reader above sees masked values
//! only. A claim whose text changed takes no part in vector search (its vector is of the clear
//! text), and the keyword index scores it on its masked text, with the index statistics as if
//! the masked text were stored (`index::bm25::Replaced`): a word only its clear text holds moves
//! no score, rank or count.

use crate::ids::WorkspaceId;
use crate::pii::Kind;
use crate::state::State;
use crate::tags::Tags;
use crate::value::{Properties, Value};
use hmac::{Hmac, Mac};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// What a masking policy masks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum On {
    /// PII spans of one kind (`None`: every kind).
    Pii(Option<Kind>),
    /// Rows carrying tag `KEY` (with `VALUE`, when given).
    Tag(Arc<str>, Option<Arc<str>>),
    /// Property `KEY`'s values.
    Property(Arc<str>),
}

/// How a masked value is shown, least strict first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// A keyed hash.
    Hash,
    /// `[REDACTED:…]`.
    Redact,
    /// Nothing.
    Hide,
}

impl Mode {
    /// From its stored name.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "hash" | "hmac" => Some(Mode::Hash),
            "redact" => Some(Mode::Redact),
            "hide" | "nothing" => Some(Mode::Hide),
            _ => None,
        }
    }

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Hash => "hash",
            Mode::Redact => "redact",
            Mode::Hide => "hide",
        }
    }
}

/// One compiled masking policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskRule {
    /// What it masks.
    pub on: On,
    /// How.
    pub mode: Mode,
}

impl MaskRule {
    /// The rule a stored policy that no longer compiles stands for: every PII span hidden.
    pub fn hide_all() -> MaskRule {
        MaskRule { on: On::Pii(None), mode: Mode::Hide }
    }
}

/// Compiles a policy's target (`pii:KIND`, `pii:*`, `tag:KEY[=VALUE]`, `property:KEY`) and mode.
pub fn compile(on: &str, mode: &str) -> Result<MaskRule, String> {
    let mode = Mode::parse(mode).ok_or_else(|| format!("mode `{mode}`: expected redact, hash or hide"))?;
    let bad = || format!("target `{on}`: expected pii:KIND (email, phone, card, ip, *), tag:KEY[=VALUE] or property:KEY");
    let (kind, rest) = on.split_once(':').ok_or_else(bad)?;
    let on = match kind {
        "pii" if rest == "*" => On::Pii(None),
        "pii" => On::Pii(Some(Kind::parse(rest).ok_or_else(bad)?)),
        "tag" => {
            let (k, v) = rest.split_once('=').map_or((rest, None), |(k, v)| (k, Some(v)));
            crate::tags::check(k, v.unwrap_or("x"))?;
            On::Tag(Arc::from(k), v.map(Arc::from))
        }
        "property" if !rest.is_empty() => On::Property(Arc::from(rest)),
        _ => return Err(bad()),
    };
    Ok(MaskRule { on, mode })
}

/// The masking policies that apply to one principal in one workspace, and the key of the hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Masker {
    rules: Vec<MaskRule>,
    secret: Option<Arc<[u8]>>,
    /// The workspace's property keys' tags.
    property_tags: std::collections::BTreeMap<String, Tags>,
}

/// A row-wide mask: how, and the label a redaction shows.
type Whole = (Mode, Arc<str>);

impl Masker {
    /// `rules` hashed under `secret` (hex; without one, hashes are shown as redactions).
    pub fn new(rules: Vec<MaskRule>, secret: Option<&str>) -> Masker {
        let secret = secret.and_then(hex_bytes).map(Arc::from);
        Masker { rules, secret, property_tags: std::collections::BTreeMap::new() }
    }

    /// This masker with the workspace's property keys' tags (`Settings::property_tags`).
    #[must_use]
    pub fn with_property_tags(mut self, tags: std::collections::BTreeMap<String, Tags>) -> Masker {
        self.property_tags = tags;
        self
    }

    /// Whether no rule applies.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    fn masks_pii(&self) -> bool {
        self.rules.iter().any(|r| matches!(r.on, On::Pii(_)))
    }

    fn masks_tags(&self) -> bool {
        self.rules.iter().any(|r| matches!(r.on, On::Tag(..)))
    }

    fn masks_keys(&self) -> bool {
        self.rules.iter().any(|r| matches!(r.on, On::Property(_))) || (self.masks_tags() && !self.property_tags.is_empty())
    }

    /// The strictest mode for PII of `kind`.
    fn for_kind(&self, kind: Kind) -> Option<Mode> {
        self.rules.iter().filter(|r| matches!(r.on, On::Pii(k) if k.is_none_or(|k| k == kind))).map(|r| r.mode).max()
    }

    /// The strictest mode for property `key`: a mask naming it, or a tag mask its tags fall under.
    fn for_key(&self, key: &str) -> Option<Mode> {
        let named = self.rules.iter().filter(|r| matches!(&r.on, On::Property(k) if &**k == key)).map(|r| r.mode).max();
        let tagged = self.property_tags.get(key).and_then(|t| self.whole(t)).map(|w| w.0);
        named.max(tagged)
    }

    /// The strictest tag mask a row with `tags` falls under.
    fn whole(&self, tags: &Tags) -> Option<Whole> {
        self.rules
            .iter()
            .filter_map(|r| match &r.on {
                On::Tag(k, v) => {
                    let have = tags.get(k)?;
                    v.as_ref().is_none_or(|v| v == have).then(|| (r.mode, have.clone()))
                }
                _ => None,
            })
            .max_by_key(|w| w.0)
    }

    /// What a value masked with `mode` and `label` shows (`None`: nothing).
    fn token(&self, mode: Mode, label: &str, clear: &str) -> Option<String> {
        match (mode, &self.secret) {
            (Mode::Hide, _) => None,
            (Mode::Hash, Some(key)) => {
                let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).ok()?;
                mac.update(clear.as_bytes());
                let tag = mac.finalize().into_bytes();
                Some(format!("[HMAC:{}]", hex(&tag[..8])))
            }
            (Mode::Redact | Mode::Hash, _) => Some(format!("[REDACTED:{label}]")),
        }
    }

    /// `text` with its masked PII spans replaced (borrowed when nothing changes).
    pub fn spans<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !self.masks_pii() {
            return Cow::Borrowed(text);
        }
        let mut out = String::new();
        let mut at = 0;
        for s in crate::pii::detect(text) {
            let Some(mode) = self.for_kind(s.kind) else { continue };
            out.push_str(&text[at..s.start]);
            if let Some(t) = self.token(mode, s.kind.name(), &text[s.start..s.end]) {
                out.push_str(&t);
            }
            at = s.end;
        }
        if at == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// A free text as this principal sees it, under the row's mask `whole` if any; PII spans
    /// are looked for when `spans` (the row's `pii` tag says there are some).
    fn text<'t>(&self, text: &'t str, whole: Option<&Whole>, spans: bool) -> Cow<'t, str> {
        match whole {
            Some((mode, label)) => Cow::Owned(self.token(*mode, label, text).unwrap_or_default()),
            None if spans => self.spans(text),
            None => Cow::Borrowed(text),
        }
    }

    /// A property value as this principal sees it (`None`: left out).
    fn value<'v>(&self, key: &str, v: &'v Value, whole: Option<&Whole>, spans: bool) -> Option<Cow<'v, Value>> {
        let clear = || match v {
            Value::Str(s) => s.to_string(),
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        let mode = match (whole, self.for_key(key)) {
            (Some((m, label)), k) if k.is_none_or(|k| k <= *m) => {
                return self.token(*m, label, &clear()).map(|t| Cow::Owned(Value::Str(t.into())))
            }
            (_, Some(m)) => m,
            (_, None) if !spans => return Some(Cow::Borrowed(v)),
            (_, None) => return Some(self.value_spans(v)),
        };
        self.token(mode, key, &clear()).map(|t| Cow::Owned(Value::Str(t.into())))
    }

    /// `v` with the PII spans of every string in it masked (inside lists and maps too: the
    /// detector read those).
    fn value_spans<'v>(&self, v: &'v Value) -> Cow<'v, Value> {
        match v {
            Value::Str(s) => match self.spans(s) {
                Cow::Borrowed(_) => Cow::Borrowed(v),
                Cow::Owned(t) => Cow::Owned(Value::Str(t.into())),
            },
            Value::List(items) => {
                let masked: Vec<Cow<'_, Value>> = items.iter().map(|i| self.value_spans(i)).collect();
                if masked.iter().all(|m| matches!(m, Cow::Borrowed(_))) {
                    Cow::Borrowed(v)
                } else {
                    Cow::Owned(Value::List(masked.into_iter().map(Cow::into_owned).collect()))
                }
            }
            Value::Map(m) => {
                let masked: Vec<(&Arc<str>, Cow<'_, Value>)> = m.iter().map(|(k, i)| (k, self.value_spans(i))).collect();
                if masked.iter().all(|(_, m)| matches!(m, Cow::Borrowed(_))) {
                    Cow::Borrowed(v)
                } else {
                    Cow::Owned(Value::Map(masked.into_iter().map(|(k, m)| (k.clone(), m.into_owned())).collect()))
                }
            }
            _ => Cow::Borrowed(v),
        }
    }

    /// `props` as this principal sees them, or `None` when nothing changes.
    fn properties(&self, props: &Properties, whole: Option<&Whole>, spans: bool) -> Option<Properties> {
        if whole.is_none() && !spans && !props.keys().any(|k| self.for_key(k).is_some()) {
            return None;
        }
        let mut changed = false;
        let mut out = Properties::new();
        for (k, v) in props {
            match self.value(k, v, whole, spans) {
                Some(Cow::Borrowed(v)) => drop(out.insert(k.clone(), v.clone())),
                Some(Cow::Owned(v)) => {
                    changed = true;
                    out.insert(k.clone(), v);
                }
                None => changed = true,
            }
        }
        changed.then_some(out)
    }
}

/// Bytes as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
        s
    })
}

/// Hex text to bytes.
fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    (hex.len().is_multiple_of(2) && !hex.is_empty())
        .then(|| (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect())
        .flatten()
}

/// The masked values of one workspace for one principal, on one snapshot: only the rows that
/// differ from the clear ones.
#[derive(Clone, Debug, Default)]
pub(crate) struct Masked {
    masker: Option<Masker>,
    /// Claims whose text differs: the masked text (`""`: none).
    pub claim_text: HashMap<u32, Box<str>>,
    /// Claims whose properties differ.
    pub claim_props: HashMap<u32, Properties>,
    /// Entities whose properties differ.
    pub entity_props: HashMap<u32, Properties>,
    /// Claims under a row-wide (tag) mask, which their evidence's texts take.
    claim_whole: HashMap<u32, Whole>,
    /// The keyword index's view of the claims whose text differs, ascending by claim: made by
    /// the first keyword search that needs it.
    lexical: std::sync::OnceLock<Vec<crate::index::bm25::Replaced>>,
}

impl Masked {
    /// Masks every claim and entity of workspace `ws` of `st` (deleted and erased ones too: a
    /// restore must not reveal a value).
    ///
    /// Only the rows a mask can change are visited: rows with tags of their own (the detector's
    /// `pii` tag among them), rows with properties when a property mask applies, and — when a tag
    /// mask applies and some message has tags — claims with evidence. PII spans are looked for
    /// only in rows the detector tagged.
    pub fn compute(st: &State, ws: WorkspaceId, masker: &Masker) -> Masked {
        let mut m = Masked { masker: Some(masker.clone()), ..Masked::default() };
        let (by_tag, by_key) = (masker.masks_tags() || masker.masks_pii(), masker.masks_keys());
        let mut claims: Vec<u32> = Vec::new();
        if by_tag {
            claims.extend(st.claims.tags.keys());
        }
        if by_key {
            claims.extend(st.claims.props.keys());
        }
        if masker.masks_tags() && !st.evidence.message_tags.is_empty() {
            let all = st.bitmaps.claims_by_ws.get(&ws);
            claims.extend(
                all.into_iter()
                    .flat_map(crate::index::bitmap::IdSet::iter)
                    .filter(|&c| *st.claims.evidence_head.get(c as usize) != crate::ids::NONE),
            );
        }
        claims.sort_unstable();
        claims.dedup();
        for c in claims.into_iter().filter(|&c| st.claim_ws(c) == ws) {
            let tags = st.claim_tags(c);
            let whole = masker.whole(&tags);
            let spans = tags.contains_key(crate::pii::TAG);
            let text = st.claims.text.get(c as usize);
            // No text stays none.
            if !text.is_empty() {
                if let Cow::Owned(t) = masker.text(text, whole.as_ref(), spans) {
                    if t != text {
                        m.claim_text.insert(c, t.into());
                    }
                }
            }
            if let Some(p) = st.claims.props.get(c).and_then(|p| masker.properties(p, whole.as_ref(), spans)) {
                m.claim_props.insert(c, p);
            }
            if let Some(w) = whole {
                m.claim_whole.insert(c, w);
            }
        }
        let mut entities: Vec<u32> = Vec::new();
        if by_tag {
            entities.extend(st.entities.tags.keys());
        }
        if by_key {
            entities.extend(st.entities.props.keys());
        }
        entities.sort_unstable();
        entities.dedup();
        for e in entities.into_iter().filter(|&e| *st.entities.ws.get(e as usize) == ws) {
            let Some(props) = st.entities.props.get(e) else { continue };
            let tags = st.entities.tags.get(&e);
            let whole = tags.and_then(|t| masker.whole(t));
            let spans = tags.is_some_and(|t| t.contains_key(crate::pii::TAG));
            if let Some(p) = masker.properties(props, whole.as_ref(), spans) {
                m.entity_props.insert(e, p);
            }
        }
        m
    }

    /// The keyword index's view of the claims whose text is masked, ascending by claim.
    pub fn lexical(&self) -> &[crate::index::bm25::Replaced] {
        self.lexical.get_or_init(|| {
            let mut v: Vec<_> = self.claim_text.iter().map(|(c, t)| crate::index::bm25::Replaced::of(*c, t)).collect();
            v.sort_unstable_by_key(|r| r.doc);
            v
        })
    }

    /// Whether nothing is masked.
    pub fn is_empty(&self) -> bool {
        self.masker.as_ref().is_none_or(Masker::is_empty)
    }

    /// An evidence text of claim `claim` as this principal sees it (`None`: left out).
    pub fn evidence_text(&self, claim: u32, text: &Arc<str>) -> Option<Arc<str>> {
        let Some(masker) = &self.masker else { return Some(text.clone()) };
        match masker.text(text, self.claim_whole.get(&claim), true) {
            Cow::Borrowed(_) => Some(text.clone()),
            Cow::Owned(t) => (!t.is_empty()).then(|| Arc::from(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masker(rules: &[(&str, &str)]) -> Masker {
        Masker::new(rules.iter().map(|(on, mode)| compile(on, mode).unwrap()).collect(), Some("00112233445566778899aabbccddeeff"))
    }

    #[test]
    fn compiles_targets_and_refuses_others() {
        assert_eq!(compile("pii:email", "redact").unwrap().on, On::Pii(Some(Kind::Email)));
        assert_eq!(compile("pii:*", "hide").unwrap(), MaskRule { on: On::Pii(None), mode: Mode::Hide });
        assert_eq!(compile("tag:sensitivity=confidential", "hash").unwrap().on, On::Tag("sensitivity".into(), Some("confidential".into())));
        assert_eq!(compile("property:phone", "redact").unwrap().on, On::Property("phone".into()));
        for (on, mode) in [("pii:ssn", "redact"), ("email", "redact"), ("property:", "hide"), ("pii:email", "blur")] {
            assert!(compile(on, mode).is_err(), "{on} {mode}");
        }
    }

    #[test]
    fn spans_redact_hash_and_hide() {
        let t = "mail ann@example.com or call +1 415 555 2671";
        assert_eq!(masker(&[("pii:email", "redact")]).spans(t), "mail [REDACTED:email] or call +1 415 555 2671");
        assert_eq!(masker(&[("pii:*", "hide")]).spans(t), "mail  or call ");
        let hashed = masker(&[("pii:phone", "hash")]).spans(t).into_owned();
        assert!(hashed.starts_with("mail ann@example.com or call [HMAC:") && !hashed.contains("415"), "{hashed}");
        // Equal values, equal tokens; another secret, another token.
        assert_eq!(masker(&[("pii:phone", "hash")]).spans(t), hashed);
        let other = Masker::new(vec![compile("pii:phone", "hash").unwrap()], Some("ff"));
        assert_ne!(other.spans(t), hashed);
        // The strictest of two rules wins.
        assert_eq!(masker(&[("pii:email", "hash"), ("pii:*", "redact")]).spans("a@b.io"), "[REDACTED:email]");
        assert!(matches!(masker(&[("pii:email", "redact")]).spans("no pii"), Cow::Borrowed(_)));
    }

    #[test]
    fn tags_mask_whole_rows_and_keys_their_values() {
        let m = masker(&[("tag:sensitivity=confidential", "redact"), ("property:phone", "hide")]);
        let tags = Tags::from([(Arc::from("sensitivity"), Arc::from("confidential"))]);
        let whole = m.whole(&tags);
        assert_eq!(m.text("secret plan", whole.as_ref(), false), "[REDACTED:confidential]");
        assert_eq!(m.whole(&Tags::new()), None);
        let props = Properties::from([(Arc::from("phone"), Value::Int(5_551_234)), (Arc::from("team"), Value::Str("ops".into()))]);
        let seen = m.properties(&props, None, false).unwrap();
        assert_eq!(seen.len(), 1, "phone is hidden: {seen:?}");
        let seen = m.properties(&props, whole.as_ref(), false).unwrap();
        // PII inside lists and maps is masked like PII at the top.
        let pii = masker(&[("pii:email", "redact")]);
        let nested = Properties::from([(
            Arc::from("contacts"),
            Value::List(vec![Value::Str("a@b.io".into()), Value::Map([(Arc::from("m"), Value::Str("write c@d.org".into()))].into())]),
        )]);
        let got = pii.properties(&nested, None, true).unwrap();
        assert_eq!(
            got["contacts"],
            Value::List(vec![
                Value::Str("[REDACTED:email]".into()),
                Value::Map([(Arc::from("m"), Value::Str("write [REDACTED:email]".into()))].into())
            ])
        );
        assert_eq!(seen.get("team"), Some(&Value::Str("[REDACTED:confidential]".into())));
        // The key's `hide` is stricter than the row's `redact`.
        assert!(!seen.contains_key("phone"));
    }
}
