//! The part of Gherkin the TCK uses: `Feature`, `Background`, `Scenario`, `Scenario Outline` with
//! `Examples`, `@ignore` tags, steps with doc strings and tables. Outlines expand to one scenario
//! per example row; CRLF line ends are stripped; table cells unescape as Cucumber does (`\\`,
//! `\|`, `\n`; any other backslash sequence is kept as written).

/// One step: its text (keyword removed) and its doc string or table.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The text after `Given`/`When`/`Then`/`And`/`But`.
    pub text: String,
    /// The doc string, with the opening quotes' indentation removed.
    pub doc: Option<String>,
    /// The table, cell by cell.
    pub table: Option<Vec<Vec<String>>>,
}

/// One runnable scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The feature file, relative to `features/`.
    pub file: String,
    /// Position in the file after expansion, from 1.
    pub ordinal: usize,
    /// The title, placeholders substituted.
    pub title: String,
    /// Tagged `@ignore`.
    pub ignored: bool,
    /// Background steps, then the scenario's own.
    pub steps: Vec<Step>,
}

/// Splits a table line into cells.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\\') | None => cell.push('\\'),
                Some('|') => cell.push('|'),
                Some('n') => cell.push('\n'),
                Some(other) => {
                    cell.push('\\');
                    cell.push(other);
                }
            },
            '|' => {
                out.push(cell.trim().to_owned());
                cell.clear();
            }
            c => cell.push(c),
        }
    }
    out
}

fn step_text(line: &str) -> Option<String> {
    let t = line.trim();
    ["Given ", "When ", "Then ", "And ", "But "].iter().find_map(|k| t.strip_prefix(k)).map(str::to_owned)
}

fn substitute(text: &str, names: &[String], row: &[String]) -> String {
    let mut out = text.to_owned();
    for (n, v) in names.iter().zip(row) {
        out = out.replace(&format!("<{n}>"), v);
    }
    out
}

/// Parses one feature file's text.
pub fn parse(file: &str, text: &str) -> Result<Vec<Scenario>, String> {
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut i = 0;
    let mut background: Vec<Step> = Vec::new();
    let mut out = Vec::new();
    let mut tags: Vec<String> = Vec::new();
    // Reads the steps starting at line `i`, up to the next section.
    let read_steps = |i: &mut usize| -> Result<Vec<Step>, String> {
        let mut steps: Vec<Step> = Vec::new();
        while *i < lines.len() {
            let t = lines[*i].trim();
            if t.starts_with("Scenario") || t.starts_with("Examples:") || t.starts_with('@') || t.starts_with("Background:") {
                break;
            }
            if let Some(s) = step_text(t) {
                steps.push(Step { text: s, doc: None, table: None });
                *i += 1;
            } else if t.starts_with("\"\"\"") {
                let indent = lines[*i].len() - lines[*i].trim_start().len();
                *i += 1;
                let mut doc = Vec::new();
                while *i < lines.len() && !lines[*i].trim().starts_with("\"\"\"") {
                    let l = lines[*i];
                    let cut = l.len() - l.trim_start().len();
                    doc.push(&l[cut.min(indent)..]);
                    *i += 1;
                }
                *i += 1;
                let last = steps.last_mut().ok_or(format!("{file}:{}: doc string without a step", *i))?;
                last.doc = Some(doc.join("\n"));
            } else if t.starts_with('|') {
                let last = steps.last_mut().ok_or(format!("{file}:{}: table without a step", *i + 1))?;
                last.table.get_or_insert_with(Vec::new).push(cells(t));
                *i += 1;
            } else {
                *i += 1;
            }
        }
        Ok(steps)
    };
    while i < lines.len() {
        let t = lines[i].trim();
        if t.starts_with('@') {
            tags.extend(t.split_whitespace().map(str::to_owned));
            i += 1;
        } else if t.starts_with("Background:") {
            i += 1;
            background = read_steps(&mut i)?;
        } else if let Some(title) = t.strip_prefix("Scenario Outline:").or_else(|| t.strip_prefix("Scenario Template:")) {
            let title = title.trim().to_owned();
            let ignored = tags.iter().any(|t| t == "@ignore");
            tags.clear();
            i += 1;
            let steps = read_steps(&mut i)?;
            while i < lines.len() && lines[i].trim().starts_with("Examples:") {
                i += 1;
                let mut table: Vec<Vec<String>> = Vec::new();
                while i < lines.len() {
                    let t = lines[i].trim();
                    if t.starts_with('|') {
                        table.push(cells(t));
                    } else if !(t.is_empty() || t.starts_with('#')) {
                        break;
                    }
                    i += 1;
                }
                let Some((names, rows)) = table.split_first() else { continue };
                for row in rows {
                    let steps = background
                        .iter()
                        .chain(&steps)
                        .map(|s| Step {
                            text: substitute(&s.text, names, row),
                            doc: s.doc.as_ref().map(|d| substitute(d, names, row)),
                            table: s
                                .table
                                .as_ref()
                                .map(|t| t.iter().map(|r| r.iter().map(|c| substitute(c, names, row)).collect()).collect()),
                        })
                        .collect();
                    out.push(Scenario {
                        file: file.to_owned(),
                        ordinal: out.len() + 1,
                        title: substitute(&title, names, row),
                        ignored,
                        steps,
                    });
                }
            }
        } else if let Some(title) = t.strip_prefix("Scenario:") {
            let ignored = tags.iter().any(|t| t == "@ignore");
            tags.clear();
            i += 1;
            let own = read_steps(&mut i)?;
            let steps = background.iter().cloned().chain(own).collect();
            out.push(Scenario { file: file.to_owned(), ordinal: out.len() + 1, title: title.trim().to_owned(), ignored, steps });
        } else {
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_expand_and_cells_unescape() {
        let text = "Feature: F\r\n  Background:\r\n    Given an empty graph\r\n\r\n  @ignore\r\n  Scenario: [1] one\r\n    When executing query:\r\n      \"\"\"\r\n      RETURN 1\r\n        AS x\r\n      \"\"\"\r\n    Then the result should be, in any order:\r\n      | x |\r\n      | 'a\\|b' |\r\n\r\n  Scenario Outline: [2] two <v>\r\n    When executing query:\r\n      \"\"\"\r\n      RETURN <v>\r\n      \"\"\"\r\n\r\n    Examples:\r\n      | v |\r\n      | 1 |\r\n      # | 3 |\r\n      | '\\'' |\r\n";
        let s = parse("F.feature", text).expect("parses");
        assert_eq!(s.len(), 3);
        assert!(s[0].ignored);
        assert_eq!(s[0].steps[0].text, "an empty graph");
        assert_eq!(s[0].steps[1].doc.as_deref(), Some("RETURN 1\n  AS x"));
        assert_eq!(s[0].steps[2].table.as_ref().expect("table")[1], ["'a|b'"]);
        assert_eq!((s[1].ordinal, s[1].title.as_str()), (2, "[2] two 1"));
        assert_eq!(s[2].steps[1].doc.as_deref(), Some("RETURN '\\''"));
        assert!(!s[2].ignored);
    }
}
