//! Conversations without an extractor: a transcript becomes ingest documents, one per turn.
//!
//! Each turn is a claim `speaker SAID turn` whose text is the turn's (an image's caption appended
//! as `[image: …]`), valid from the turn's time, with the turn as its evidence (conversation and
//! message ids); the speakers are `person` entities and each turn an entity of type `turn` named
//! by its id. The names a turn mentions (people, places, organisations, products, days and
//! months: `mentions`) become entities too, each linked to the turn by a text-less `MENTIONS`
//! claim, so the graph path of recall reaches, from a name the question uses, the turns that
//! used it; each turn after the first is linked to the one before by a text-less `FOLLOWS` claim,
//! so recall lifts the reply to a turn that matches. Recall walks these links and never returns
//! them as facts (`is_link`).
//!
//! Names are found without a model: runs of capitalised words, where a word that opens a
//! sentence counts only if the conversation also capitalises it mid-sentence and never writes it
//! in lower case ("Wow" opens sentences, "Sweden" is a name wherever it stands).

use super::{err, non_empty, ClaimIn, EntityIn, IngestDoc, IngestError, Source};
use serde::Deserialize;
use std::collections::{BTreeSet, HashSet};

/// The predicate of a turn's claim.
pub const SAID: &str = "said";
pub use crate::model::{is_link, FOLLOWS, MENTIONS};
/// Words in a name, at most.
const NAME_WORDS_MAX: usize = 5;

/// A transcript: `{"id": …, "workspace": …, "turns": [{"id", "speaker", "text", "at", "image_caption"}]}`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// Target workspace (default `default`).
    #[serde(default = "super::default_workspace")]
    pub workspace: String,
    /// The conversation's id (the evidence's `conversation_id`).
    pub id: String,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
}

/// One turn of a conversation.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The turn's id: its claim's and its entity's, so unique in the workspace.
    pub id: String,
    /// Who spoke.
    pub speaker: String,
    /// What was said.
    #[serde(default)]
    pub text: String,
    /// When (RFC 3339 or epoch seconds): the claim's valid time.
    #[serde(default)]
    pub at: Option<String>,
    /// The caption of an image shared in the turn.
    #[serde(default)]
    pub image_caption: Option<String>,
}

/// Parses a conversation, naming the JSON path of the first bad value.
pub fn parse_conversation(text: &str) -> Result<Conversation, IngestError> {
    super::from_json(text)
}

/// The conversation's ingest documents, one per turn (see the module documentation).
pub fn documents(c: &Conversation) -> Result<Vec<IngestDoc>, IngestError> {
    non_empty("id".into(), &c.id)?;
    non_empty("workspace".into(), &c.workspace)?;
    let mut ids = HashSet::new();
    for (i, t) in c.turns.iter().enumerate() {
        non_empty(format!("turns[{i}].id"), &t.id)?;
        non_empty(format!("turns[{i}].speaker"), &t.speaker)?;
        if !ids.insert(t.id.trim()) {
            return Err(err(format!("turns[{i}].id"), format!("`{}` is the id of an earlier turn", t.id.trim())));
        }
    }
    let texts: Vec<String> = c
        .turns
        .iter()
        .map(|t| match t.image_caption.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(caption) => format!("{} [image: {caption}]", t.text.trim()).trim_start().to_owned(),
            None => t.text.trim().to_owned(),
        })
        .collect();
    let names = mentions(&texts.iter().map(String::as_str).collect::<Vec<_>>());
    let speakers: HashSet<String> = c.turns.iter().map(|t| t.speaker.trim().to_lowercase()).collect();
    Ok(c.turns
        .iter()
        .zip(texts)
        .zip(names)
        .enumerate()
        .map(|(i, ((t, text), names))| {
            let (speaker, turn) = (t.speaker.trim().to_owned(), t.id.trim().to_owned());
            let mut entities = vec![
                EntityIn { name: speaker.clone(), entity_type: "person".into(), ..EntityIn::default() },
                EntityIn { name: turn.clone(), entity_type: "turn".into(), ..EntityIn::default() },
            ];
            let mut claims = vec![ClaimIn {
                subject: speaker,
                predicate: SAID.into(),
                object: turn.clone(),
                confidence: 1.0,
                text: (!text.is_empty()).then_some(text),
                valid_from: t.at.clone(),
                id: Some(turn.clone()),
                ..ClaimIn::default()
            }];
            if let Some(before) = i.checked_sub(1).map(|b| c.turns[b].id.trim().to_owned()) {
                entities.push(EntityIn { name: before.clone(), entity_type: "turn".into(), ..EntityIn::default() });
                claims.push(ClaimIn {
                    subject: turn.clone(),
                    predicate: FOLLOWS.into(),
                    object: before,
                    confidence: 1.0,
                    valid_from: t.at.clone(),
                    ..ClaimIn::default()
                });
            }
            for name in names {
                let kind = if speakers.contains(&name.to_lowercase()) { "person" } else { "name" };
                entities.push(EntityIn { name: name.clone(), entity_type: kind.into(), ..EntityIn::default() });
                claims.push(ClaimIn {
                    subject: turn.clone(),
                    predicate: MENTIONS.into(),
                    object: name,
                    confidence: 1.0,
                    valid_from: t.at.clone(),
                    ..ClaimIn::default()
                });
            }
            IngestDoc {
                workspace: c.workspace.clone(),
                source: Source {
                    conversation_id: Some(c.id.trim().to_owned()),
                    message_id: Some(turn),
                    extracted_at: t.at.clone(),
                    ..Source::default()
                },
                entities,
                claims,
                ..IngestDoc::default()
            }
        })
        .collect())
}

/// A word as written, and whether it opens a sentence.
struct Word<'a> {
    text: &'a str,
    opens: bool,
    /// Punctuation right before it (`"`, `(`) starts a new run of capitalised words.
    starts: bool,
    /// Punctuation right after it (`,`, `)`) ends the run.
    breaks: bool,
}

/// The words of `text`, edge punctuation and a possessive `'s` cut off.
fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut opens = true;
    for raw in text.split_whitespace() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w);
        let last = raw.chars().last().unwrap_or(' ');
        if !w.is_empty() {
            let starts = raw.starts_with(|c: char| !c.is_alphanumeric());
            out.push(Word { text: w, opens, starts, breaks: !last.is_alphanumeric() });
        }
        opens = matches!(last, '.' | '!' | '?' | ':' | ';' | '"' | '“' | '”') || (w.is_empty() && opens);
    }
    out
}

fn capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase) && w.chars().count() > 1
}

/// The names each text mentions (see the module documentation), in order of first mention,
/// each once.
pub fn mentions(texts: &[&str]) -> Vec<Vec<String>> {
    let stop = crate::index::text::stop_words();
    let all: Vec<Vec<Word<'_>>> = texts.iter().map(|t| words(t)).collect();
    // What the whole conversation says about each word: written in lower case somewhere, or
    // capitalised where no sentence starts.
    let (mut lower, mut mid) = (HashSet::new(), HashSet::new());
    for w in all.iter().flatten() {
        if w.text.chars().next().is_some_and(char::is_lowercase) {
            lower.insert(w.text.to_lowercase());
        } else if !w.opens && capitalised(w.text) {
            mid.insert(w.text.to_owned());
        }
    }
    let named = |w: &Word<'_>| {
        let key = w.text.to_lowercase();
        capitalised(w.text)
            && !stop.contains(key.as_str())
            && !w.text.chars().all(|c| c.is_ascii_digit())
            && (!w.opens || (mid.contains(w.text) && !lower.contains(&key)))
    };
    all.iter()
        .map(|ws| {
            let (mut seen, mut out) = (BTreeSet::new(), Vec::new());
            let mut run: Vec<&str> = Vec::new();
            let mut flush = |run: &mut Vec<&str>| {
                if !run.is_empty() && run.len() <= NAME_WORDS_MAX {
                    let name = run.join(" ");
                    if seen.insert(name.to_lowercase()) {
                        out.push(name);
                    }
                }
                run.clear();
            };
            for w in ws {
                if w.opens || w.starts {
                    flush(&mut run);
                }
                if named(w) {
                    run.push(w.text);
                } else {
                    flush(&mut run);
                }
                if w.breaks {
                    flush(&mut run);
                }
            }
            flush(&mut run);
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_runs_of_capitalised_words() {
        let texts = [
            "Wow, Caroline! I went to Sweden with my friend Anna Larsen last May.",
            "Thanks! Sweden is lovely. Did you see the Northern Lights?",
            "Wow that is great. Anna says hi, and the Northern Lights were amazing in Sweden.",
            "I love pottery. Pottery class at The Clay Studio is fun.",
        ];
        let m = mentions(&texts);
        assert_eq!(m[0], ["Caroline", "Sweden", "Anna Larsen", "May"]);
        // "Sweden" opens a sentence but is capitalised mid-sentence elsewhere and never in lower case.
        assert_eq!(m[1], ["Sweden", "Northern Lights"]);
        // "Wow" opens sentences only; "Anna" opens a sentence and is a name elsewhere.
        assert_eq!(m[2], ["Anna", "Northern Lights", "Sweden"]);
        // "Pottery" is written in lower case too; "The" is a stop word.
        assert_eq!(m[3], ["Clay Studio"]);
    }

    #[test]
    fn turns_become_claims_with_their_mentions() {
        let c = parse_conversation(
            r#"{"id": "c1", "turns": [
                {"id": "D1:1", "speaker": "Caroline", "text": "Hi Melanie, I moved from Sweden.", "at": "2023-05-08T13:56:00Z"},
                {"id": "D1:2", "speaker": "Melanie", "text": "Nice!", "image_caption": "a photo of a lake"}]}"#,
        )
        .unwrap();
        let docs = documents(&c).unwrap();
        assert_eq!(docs.len(), 2);
        let said = &docs[0].claims[0];
        assert_eq!((said.subject.as_str(), said.predicate.as_str(), said.object.as_str()), ("Caroline", "said", "D1:1"));
        assert_eq!(said.valid_from.as_deref(), Some("2023-05-08T13:56:00Z"));
        let linked: Vec<(&str, &str)> = docs[0].claims[1..].iter().map(|c| (c.object.as_str(), c.predicate.as_str())).collect();
        assert_eq!(linked, [("Melanie", "mentions"), ("Sweden", "mentions")]);
        assert!(docs[0].claims[1..].iter().all(|c| is_link(&c.predicate, c.text.as_deref())));
        // A speaker named in a turn is the speaker's entity (a person), not a new name.
        assert!(docs[0].entities.iter().any(|e| e.name == "Melanie" && e.entity_type == "person"));
        assert_eq!(docs[1].claims[0].text.as_deref(), Some("Nice! [image: a photo of a lake]"));
        let follows = &docs[1].claims[1];
        assert_eq!((follows.subject.as_str(), follows.predicate.as_str(), follows.object.as_str()), ("D1:2", "follows", "D1:1"));
        assert!(is_link(&follows.predicate, follows.text.as_deref()));
        assert_eq!((docs[1].source.conversation_id.as_deref(), docs[1].source.message_id.as_deref()), (Some("c1"), Some("D1:2")));
    }

    #[test]
    fn bad_conversations_are_refused_by_path() {
        let e = parse_conversation(r#"{"id": "c", "turns": [{"id": "t", "speakr": "x"}]}"#).unwrap_err();
        assert_eq!(e.path, "turns[0].speakr", "{e}");
        let c = parse_conversation(r#"{"id": "c", "turns": [{"id": "t", "speaker": " "}]}"#).unwrap();
        assert_eq!(documents(&c).unwrap_err().path, "turns[0].speaker");
        let c = parse_conversation(r#"{"id": "c", "turns": [{"id": "t", "speaker": "a"}, {"id": "t", "speaker": "b"}]}"#).unwrap();
        assert_eq!(documents(&c).unwrap_err().path, "turns[1].id");
    }
}
