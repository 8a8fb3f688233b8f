//! The times a question names: "on October 13, 2023", "in July 2023", "in June", "last week",
//! "two days ago", "yesterday", and spans: "since June", "before 2023", "between March and May",
//! "the last 3 days", "the week before August 3". Recall lifts the facts that began or were heard in them ("What did
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
        let found = range_at(words, i, today)
            .or_else(|| dated_at(words, i, today))
            .or_else(|| relative_at(words, i, today).map(|(w, len)| (Some(w), len)));
        match found {
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
        if dated_at(w, i + 1, today).is_some() {
            // "in December 2023": the date that follows is the phrase.
            return None;
        }
        return bare_at(w, i + 1, today, first == "on").map(|x| (x, 2));
    }
    if matches!(first, "last" | "past" | "previous" | "this") {
        let back = i64::from(first != "this");
        let next = word(1)?;
        // "the last 3 days", "the past two weeks": up to today, not calendar units.
        if let Some(n) = count(next).filter(|_| back == 1 && !matches!(next, "a" | "an")) {
            let first_day = rolling_start(today, word(2)?, n)?;
            return Some((Window::days(first_day, today + Duration::days(1)), 3));
        }
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

/// A month or a year alone, which a preposition before it made a time ("in June", "in 2023",
/// "since May"), or a weekday (`weekday`: after `on`, `since`, …): its window.
fn bare_at(w: &[String], i: usize, today: NaiveDate, weekday: bool) -> Option<Window> {
    let next = w.get(i).map(String::as_str)?;
    if let Some(month) = month(next) {
        let year = if today.month() >= month { today.year() } else { today.year() - 1 };
        return month_window(year, month);
    }
    if let Some(year) = year(next) {
        return year_window(year);
    }
    let day = self::weekday(next).filter(|_| weekday)?;
    Some(day_window(latest_weekday(today, day, 0)))
}

/// The first day of the last `n` units up to today ("the last 3 days" are today and the two
/// before it; "the past two weeks" the fourteen days up to today).
fn rolling_start(today: NaiveDate, unit: &str, n: i64) -> Option<NaiveDate> {
    match unit.strip_suffix('s').unwrap_or(unit) {
        "day" => Some(today - Duration::days(n - 1)),
        "week" => Some(today - Duration::days(7 * n - 1)),
        "month" => today.checked_sub_months(chrono::Months::new(u32::try_from(n).ok()?)).map(|d| d + Duration::days(1)),
        "year" => today.checked_sub_months(chrono::Months::new(u32::try_from(n).ok()?.checked_mul(12)?)).map(|d| d + Duration::days(1)),
        _ => None,
    }
}

/// A time and its length in words: a date, a relative phrase, or (after a word that opens a
/// span, as a preposition does) a month, a year or a weekday alone.
fn time_at(w: &[String], i: usize, today: NaiveDate) -> Option<(Window, usize)> {
    if let Some((window, len)) = dated_at(w, i, today) {
        return window.map(|x| (x, len));
    }
    relative_at(w, i, today).or_else(|| bare_at(w, i, today, true).map(|x| (x, 1)))
}

/// A span between two times or reaching from one: "since June" (up to today), "after May 3",
/// "before 2023" (from any time), "until last week", "between March and May", "from June 2023 to
/// August 2023", or units counted from a time (`anchored_at`). Its window (none when it is
/// empty) and its length in words.
fn range_at(w: &[String], i: usize, today: NaiveDate) -> Option<(Option<Window>, usize)> {
    if let Some(anchored) = anchored_at(w, i, today) {
        return Some(anchored);
    }
    let first = w.get(i).map(String::as_str)?;
    let tomorrow = at_midnight(today + Duration::days(1));
    let span = |from: Timestamp, until: Timestamp| (from < until).then_some(Window { from, until });
    match first {
        "since" | "after" => {
            let (t, len) = time_at(w, i + 1, today)?;
            Some((span(if first == "since" { t.from } else { t.until }, tomorrow), len + 1))
        }
        "before" | "until" | "till" => {
            let (t, len) = time_at(w, i + 1, today)?;
            Some((span(Timestamp::MIN, if first == "before" { t.from } else { t.until }), len + 1))
        }
        "between" | "from" => {
            let (a, len_a) = time_at(w, i + 1, today)?;
            let link = w.get(i + 1 + len_a).map(String::as_str)?;
            let linked = if first == "between" { link == "and" } else { matches!(link, "to" | "until" | "till" | "through") };
            linked.then_some(())?;
            let (b, len_b) = time_at(w, i + 2 + len_a, today)?;
            Some((span(a.from, b.until), len_a + len_b + 2))
        }
        _ => None,
    }
}

/// Units counted from a time: "the week before August 3, 2023" (the seven days before it, and
/// the day itself), "two weeks before August 11" (from the day two weeks before), "the day after
/// May 3", "last weekend before April 10, 2023" (from the Saturday before it). Its window and
/// length.
fn anchored_at(w: &[String], i: usize, today: NaiveDate) -> Option<(Option<Window>, usize)> {
    let first = w.get(i).map(String::as_str)?;
    let (n, skip) = match (first, count(first)) {
        ("the" | "last", _) => (1, 1),
        (_, Some(n)) => (n, 1),
        _ => (1, 0),
    };
    let unit = w.get(i + skip).map(String::as_str)?;
    let unit = unit.strip_suffix('s').unwrap_or(unit);
    let before = match w.get(i + skip + 1).map(String::as_str)? {
        "before" => true,
        "after" => false,
        _ => return None,
    };
    let days = match unit {
        "day" => 1,
        "week" => 7,
        "weekend" => 0,
        _ => return None,
    };
    let (t, len) = time_at(w, i + skip + 2, today)?;
    let (from, until) = (date_of(t.from), date_of(t.until).map(|d| d - Duration::days(1)));
    // Before a time reaches to its end: what happened the week before a day is often told on it.
    let window = if unit == "weekend" && before {
        let saturday = latest_weekday(from? - Duration::days(2), Weekday::Sat, 0) - Duration::weeks(n - 1);
        Window { from: at_midnight(saturday), until: t.until }
    } else if unit == "weekend" {
        let saturday = latest_weekday(until? + Duration::days(7), Weekday::Sat, 0) + Duration::weeks(n - 1);
        Window::days(saturday, saturday + Duration::days(2))
    } else if before {
        Window { from: at_midnight(from? - Duration::days(days * n)), until: t.until }
    } else {
        let start = until? + Duration::days(1 + days * (n - 1));
        Window::days(start, start + Duration::days(days))
    };
    Some((Some(window), skip + 2 + len))
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
        // Any time (a span open to the past starts at `Timestamp::MIN`) is "".
        let day = |t: Timestamp| if t == Timestamp::MIN { String::new() } else { t.to_rfc3339().get(..10).unwrap_or_default().to_owned() };
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

    #[test]
    fn spans_between_times_and_up_to_now() {
        spans(&[
            ("what changed since June", "2026-06-01", "2026-12-10"),
            ("anything since last week?", "2026-11-30", "2026-12-10"),
            ("since Monday", "2026-12-07", "2026-12-10"),
            ("what did we decide after May 3", "2026-05-04", "2026-12-10"),
            ("until last week", "", "2026-12-07"),
            ("what did we use before 2023", "", "2023-01-01"),
            ("between March and May", "2026-03-01", "2026-06-01"),
            ("between 2021 and 2023", "2021-01-01", "2024-01-01"),
            ("from June 2023 to August 2023", "2023-06-01", "2023-09-01"),
            ("between May 3, 2023 and May 10, 2023", "2023-05-03", "2023-05-11"),
            ("what broke in the last 3 days", "2026-12-07", "2026-12-10"),
            ("over the past two weeks", "2026-11-26", "2026-12-10"),
            ("the past 2 months", "2026-10-10", "2026-12-10"),
            // Units counted from a time.
            ("What did John do the week before August 3, 2023?", "2023-07-27", "2023-08-04"),
            ("the puppy she got two weeks before August 11, 2023", "2023-07-28", "2023-08-12"),
            ("the day after May 3", "2026-05-04", "2026-05-05"),
            ("3 days after June 2023", "2023-07-03", "2023-07-04"),
            ("What did Maria do last weekend before April 10, 2023?", "2023-04-08", "2023-04-11"),
            ("the weekend after April 10, 2023", "2023-04-15", "2023-04-17"),
        ]);
        // A span with nothing in it names nothing.
        for text in ["since 2030", "after today", "between May 2023 and March 2023"] {
            assert_eq!(named(text), Vec::new(), "{text}");
        }
    }

    proptest::proptest! {
        /// Any words at any time: no panic, and every window is a span of time.
        #[test]
        fn any_words_at_any_time(
            words in proptest::collection::vec(
                "[a-z0-9]{1,6}|may|june|last|past|ago|in|on|of|since|after|before|until|between|and|from|to|the|week|weekend|year|days|2023|29|13th|1000",
                0..12,
            ),
            // Any time, or one of the years the scanner reads (1000–9999, edges included).
            now in proptest::prop_oneof![proptest::num::i64::ANY, -30_610_224_000_000_000i64..253_402_300_800_000_000i64],
        ) {
            let named = times_named(&words, Timestamp(now));
            proptest::prop_assert!(named.iter().all(|w| w.from < w.until));
        }
    }

    #[test]
    fn words_that_only_look_like_times_stay_words() {
        for text in [
            "May I ask what June said?",
            "the march to the sea",
            "we had 13 bugs",
            "route 66 in 1999s",
            "the last one",
            "I may go",
            "after all",
            "before you go",
            "since I said so",
            "the last 5 bugs",
            "from June",
        ] {
            assert_eq!(named(text), Vec::new(), "{text}");
        }
    }
}
