//! The times a question names: "on October 13, 2023", "in July 2023", "in June", "last week",
//! "two days ago", "yesterday". Recall lifts the facts that began or were heard in them ("What did
//! Maria donate in December 2023?" asks for what was said then, not for every donation).
//!
//! A small scanner over the question's lower-case words, by hand: the date crates parse a string
//! that is a date, none finds the date phrases inside a sentence. Dates are read in UTC; a date
//! without a year is its latest occurrence not after the query's time, and relative phrases count
//! from it too. A month word alone is a month only after a preposition ("in May", not "may
//! I"), so names and modal verbs stay words.

use crate::time::Timestamp;
use chrono::{Datelike, Duration, NaiveDate, Weekday};

/// A span of time, `[from, until)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Its first instant.
    pub from: Timestamp,
    /// The first instant after it.
    pub until: Timestamp,
}

impl Window {
    /// Whether `t` lies in it.
    pub fn holds(&self, t: Timestamp) -> bool {
        self.from <= t && t < self.until
    }

    /// The days `[first, after)`.
    fn days(first: NaiveDate, after: NaiveDate) -> Window {
        Window { from: at_midnight(first), until: at_midnight(after) }
    }
}

/// The times named in `text` (see `times_named`).
pub fn times_in(text: &str, now: Timestamp) -> Vec<Window> {
    times_named(&crate::normalize::lower_words(text), now)
}

/// The windows of the times named in `words` (lower case, as `normalize::lower_words` splits a
/// question), in the order it names them; relative phrases and dates without a year are read from
/// `now`.
pub fn times_named(words: &[String], now: Timestamp) -> Vec<Window> {
    let mut windows = Vec::new();
    let Some(today) = date_of(now) else { return windows };
    let mut i = 0;
    while i < words.len() {
        match dated_at(words, i, today).or_else(|| relative_at(words, i, today).map(|(w, len)| (Some(w), len))) {
            Some((window, len)) => {
                // A date that does not exist ("February 29, 2023") names nothing.
                windows.extend(window);
                i += len;
            }
            None => i += 1,
        }
    }
    windows
}

/// The date starting at word `i` (a day or a month, with or without its year): its window (none
/// for a day no calendar has) and its length in words.
fn dated_at(w: &[String], i: usize, today: NaiveDate) -> Option<(Option<Window>, usize)> {
    let word = |k: usize| w.get(i + k).map(String::as_str);
    let first = word(0)?;
    // 2023-05-08 and 2023-05 (split into words at the dashes).
    if let Some(year) = year(first) {
        if let Some(month) = word(1).filter(|m| m.len() == 2).and_then(number).filter(|m| (1..=12).contains(m)) {
            if let Some(d) = word(2).filter(|d| d.len() == 2).and_then(number).and_then(|d| NaiveDate::from_ymd_opt(year, month, d)) {
                return Some((Some(day_window(d)), 3));
            }
            return Some((month_window(year, month), 2));
        }
    }
    // October 13, 2023 / October 13th / October 2023.
    if let Some(month) = month(first) {
        if let Some(day) = word(1).and_then(day) {
            if let Some(year) = word(2).and_then(year) {
                return Some((NaiveDate::from_ymd_opt(year, month, day).map(day_window), 3));
            }
            return Some((latest_date(today, month, day).map(day_window), 2));
        }
        if let Some(year) = word(1).and_then(year) {
            return Some((month_window(year, month), 2));
        }
    }
    // 13 October 2023 / the 3rd of June / 3 June.
    if let Some(day) = day(first) {
        let of = usize::from(word(1) == Some("of"));
        if let Some(month) = word(1 + of).and_then(month) {
            if let Some(year) = word(2 + of).and_then(year) {
                return Some((NaiveDate::from_ymd_opt(year, month, day).map(day_window), 3 + of));
            }
            return Some((latest_date(today, month, day).map(day_window), 2 + of));
        }
    }
    None
}

/// A phrase that needs a leading word ("in June", "in 2023", "last week", "on Monday", "two days
/// ago"), or `today` / `yesterday`.
fn relative_at(w: &[String], i: usize, today: NaiveDate) -> Option<(Window, usize)> {
    let word = |k: usize| w.get(i + k).map(String::as_str);
    let first = word(0)?;
    match first {
        "today" | "tonight" => return Some((day_window(today), 1)),
        "yesterday" => return Some((day_window(today - Duration::days(1)), 1)),
        _ => {}
    }
    if PREPOSITIONS.contains(&first) {
        let next = word(1)?;
        if dated_at(w, i + 1, today).is_some() {
            // "in December 2023": the date that follows is the phrase.
            return None;
        }
        if let Some(month) = month(next) {
            let year = if today.month() >= month { today.year() } else { today.year() - 1 };
            return Some((month_window(year, month)?, 2));
        }
        if let Some(year) = year(next) {
            return Some((year_window(year)?, 2));
        }
        if first == "on" {
            if let Some(day) = weekday(next) {
                return Some((day_window(latest_weekday(today, day, 0)), 2));
            }
        }
        return None;
    }
    if matches!(first, "last" | "past" | "previous" | "this") {
        let back = i64::from(first != "this");
        let next = word(1)?;
        if let Some(day) = weekday(next) {
            // "last Monday" is the Monday of a week ago when today is one.
            return Some((day_window(latest_weekday(today, day, back)), 2));
        }
        return Some((unit_window(today, next, back)?, 2));
    }
    // "two weeks ago", "4 years ago", "a month ago".
    let n = count(first)?;
    let unit = word(1)?;
    (word(2)? == "ago").then_some(())?;
    Some((unit_window(today, unit, n)?, 3))
}

/// The calendar unit (`day`, `week`, `weekend`, `month`, `year`, singular or plural) `back` units
/// before the one holding `today`.
fn unit_window(today: NaiveDate, unit: &str, back: i64) -> Option<Window> {
    let unit = unit.strip_suffix('s').unwrap_or(unit);
    match unit {
        "day" => Some(day_window(today - Duration::days(back))),
        "week" => {
            let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday())) - Duration::weeks(back);
            Some(Window::days(monday, monday + Duration::weeks(1)))
        }
        "weekend" => {
            // The weekend of the current week (Monday first), or `back` weeks before it.
            let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
            let saturday = monday + Duration::days(5) - Duration::weeks(back);
            Some(Window::days(saturday, saturday + Duration::days(2)))
        }
        "month" => {
            let months = i64::from(today.year()) * 12 + i64::from(today.month0()) - back;
            month_window(i32::try_from(months.div_euclid(12)).ok()?, u32::try_from(months.rem_euclid(12)).ok()? + 1)
        }
        "year" => year_window(i32::try_from(i64::from(today.year()) - back).ok()?),
        _ => None,
    }
}

/// Words before a month or a year alone that make it a time ("in June", "during 2023").
const PREPOSITIONS: [&str; 5] = ["in", "during", "on", "of", "throughout"];

const MONTHS: [&str; 12] =
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/// The month (1–12) a word names: its full name or its first three letters (and `sept`).
fn month(w: &str) -> Option<u32> {
    let i = MONTHS.iter().position(|m| *m == w || (w.len() == 3 && m.starts_with(w)) || (w == "sept" && *m == "september"))?;
    u32::try_from(i + 1).ok()
}

fn weekday(w: &str) -> Option<Weekday> {
    let w = w.strip_suffix('s').unwrap_or(w);
    w.parse::<Weekday>().ok()
}

/// A day of the month: `13`, `13th`, `1st`.
fn day(w: &str) -> Option<u32> {
    let digits = ["st", "nd", "rd", "th"].iter().find_map(|s| w.strip_suffix(s)).unwrap_or(w);
    (digits.len() <= 2).then_some(())?;
    number(digits).filter(|d| (1..=31).contains(d))
}

/// A year of four digits, 1900–2199.
fn year(w: &str) -> Option<i32> {
    (w.len() == 4).then_some(())?;
    number(w).filter(|y| (1900..=2199).contains(y)).and_then(|y| i32::try_from(y).ok())
}

fn number(w: &str) -> Option<u32> {
    if w.is_empty() || !w.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    w.parse().ok()
}

/// A small count: digits, or one to twelve in words (`a`/`an` is one).
fn count(w: &str) -> Option<i64> {
    const WORDS: [&str; 12] = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    if let Some(i) = WORDS.iter().position(|x| *x == w) {
        return i64::try_from(i + 1).ok();
    }
    if matches!(w, "a" | "an") {
        return Some(1);
    }
    number(w).filter(|n| *n <= 1000).map(i64::from)
}

/// The latest `month`/`day` not after `today` (February 29 looks back to a leap year).
fn latest_date(today: NaiveDate, month: u32, day: u32) -> Option<NaiveDate> {
    (0..8).filter_map(|back| NaiveDate::from_ymd_opt(today.year() - back, month, day)).find(|d| *d <= today)
}

/// The latest `day` of the week not after `today`, `weeks_back` weeks before it.
fn latest_weekday(today: NaiveDate, day: Weekday, weeks_back: i64) -> NaiveDate {
    let since = (7 + today.weekday().num_days_from_monday() - day.num_days_from_monday()) % 7;
    let latest = today - Duration::days(i64::from(since));
    // "last Monday" said on a Monday is a week ago; said on a Wednesday, two days ago.
    if weeks_back > 0 && since == 0 {
        latest - Duration::weeks(weeks_back)
    } else {
        latest
    }
}

fn day_window(d: NaiveDate) -> Window {
    Window::days(d, d + Duration::days(1))
}

fn month_window(year: i32, month: u32) -> Option<Window> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let next = if month == 12 { NaiveDate::from_ymd_opt(year + 1, 1, 1)? } else { NaiveDate::from_ymd_opt(year, month + 1, 1)? };
    Some(Window::days(first, next))
}

fn year_window(year: i32) -> Option<Window> {
    Some(Window::days(NaiveDate::from_ymd_opt(year, 1, 1)?, NaiveDate::from_ymd_opt(year + 1, 1, 1)?))
}

/// The UTC date of `t`, when its year is one of 1000–9999: far enough from chrono's limits that
/// the arithmetic here (at most a thousand units back, a year ahead) stays inside them.
fn date_of(t: Timestamp) -> Option<NaiveDate> {
    chrono::DateTime::from_timestamp(t.epoch_seconds(), 0).map(|d| d.date_naive()).filter(|d| (1000..=9999).contains(&d.year()))
}

fn at_midnight(d: NaiveDate) -> Timestamp {
    Timestamp::from_epoch_seconds(d.and_hms_opt(0, 0, 0).map_or(0, |t| t.and_utc().timestamp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::normalize::lower_words as words;

    /// The windows named in `text` on Wednesday 2026-12-09, as RFC 3339 days.
    fn named(text: &str) -> Vec<(String, String)> {
        let now = Timestamp::parse("2026-12-09T15:00:00Z").expect("time");
        let day = |t: Timestamp| t.to_rfc3339().get(..10).unwrap_or_default().to_owned();
        times_named(&words(text), now).iter().map(|w| (day(w.from), day(w.until))).collect()
    }

    /// Each text names the one window `[from, until)` beside it.
    fn spans(cases: &[(&str, &str, &str)]) {
        for (text, from, until) in cases {
            assert_eq!(named(text), [((*from).to_owned(), (*until).to_owned())], "{text}");
        }
    }

    #[test]
    fn dates_with_a_year() {
        spans(&[
            ("What painting did Melanie show on October 13, 2023?", "2023-10-13", "2023-10-14"),
            ("What did Gina find for her store on 1 February, 2023?", "2023-02-01", "2023-02-02"),
            ("the 3rd of June 2023", "2023-06-03", "2023-06-04"),
            ("deployed 2023-05-08 at noon", "2023-05-08", "2023-05-09"),
            ("What happened in December 2023?", "2023-12-01", "2024-01-01"),
            ("the 2023-02 release", "2023-02-01", "2023-03-01"),
            ("How many times in 2023?", "2023-01-01", "2024-01-01"),
        ]);
        assert_eq!(named("on February 29, 2023"), Vec::new(), "no such day");
    }

    #[test]
    fn dates_without_a_year_are_the_latest_not_after_now() {
        spans(&[
            ("When did Melanie go camping in June?", "2026-06-01", "2026-07-01"),
            ("What did we decide in December?", "2026-12-01", "2027-01-01"),
            ("the party on December 25", "2025-12-25", "2025-12-26"),
            ("on 3 May", "2026-05-03", "2026-05-04"),
            ("on February 29", "2024-02-29", "2024-03-01"),
        ]);
    }

    #[test]
    fn relative_phrases_count_from_now() {
        spans(&[
            ("what did we decide yesterday", "2026-12-08", "2026-12-09"),
            ("what broke today", "2026-12-09", "2026-12-10"),
            ("what did we ship last week", "2026-11-30", "2026-12-07"),
            ("this week", "2026-12-07", "2026-12-14"),
            ("last month", "2026-11-01", "2026-12-01"),
            ("last year", "2025-01-01", "2026-01-01"),
            ("two weeks ago", "2026-11-23", "2026-11-30"),
            ("4 years ago", "2022-01-01", "2023-01-01"),
            ("a month ago", "2026-11-01", "2026-12-01"),
            ("3 days ago", "2026-12-06", "2026-12-07"),
            ("last weekend", "2026-12-05", "2026-12-07"),
            ("on Monday", "2026-12-07", "2026-12-08"),
            ("last Wednesday", "2026-12-02", "2026-12-03"),
            ("last Tuesday", "2026-12-08", "2026-12-09"),
            ("this weekend", "2026-12-12", "2026-12-14"),
            // A month alone is a word: this is last year.
            ("January last year", "2025-01-01", "2026-01-01"),
        ]);
    }

    proptest::proptest! {
        /// Any words at any time: no panic, and every window is a span of time.
        #[test]
        fn any_words_at_any_time(
            words in proptest::collection::vec("[a-z0-9]{1,6}|may|june|last|ago|in|on|of|week|year|2023|29|13th|1000", 0..12),
            // Any time, or one of the years the scanner reads (1000–9999, edges included).
            now in proptest::prop_oneof![proptest::num::i64::ANY, -30_610_224_000_000_000i64..253_402_300_800_000_000i64],
        ) {
            let named = times_named(&words, Timestamp(now));
            proptest::prop_assert!(named.iter().all(|w| w.from < w.until));
        }
    }

    #[test]
    fn words_that_only_look_like_times_stay_words() {
        for text in ["May I ask what June said?", "the march to the sea", "we had 13 bugs", "route 66 in 1999s", "the last one", "I may go"]
        {
            assert_eq!(named(text), Vec::new(), "{text}");
        }
    }
}
