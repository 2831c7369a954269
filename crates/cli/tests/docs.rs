//! Docs that cannot drift (issue 36): every relative link in the README,
//! the changelog and `docs/` leads to a file that exists (and an anchor
//! to a heading of it), and every `bgctl` command shown in a code block
//! parses with bgctl's own argument parser.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/cli sits two folders below the workspace")
        .to_path_buf()
}

/// The README, the changelog and every Markdown file under docs/.
fn doc_files() -> Vec<PathBuf> {
    let root = workspace();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// A heading's anchor as GitHub makes it: lower case, punctuation gone
/// (hyphens and underscores kept), spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file: its headings' (outside code blocks)
/// and the `<a id="...">` it sets.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.insert(slug(line.trim_start_matches('#')));
        }
        for part in line.split("id=\"").skip(1) {
            if let Some((id, _)) = part.split_once('"') {
                found.insert(id.to_string());
            }
        }
    }
    found
}

/// The targets of a text's inline links, `[text](target)`, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_relative_link_in_the_docs_leads_somewhere() {
    let mut broken = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("a readable doc");
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a folder").join(path)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target} (no such file)", file.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let headings = std::fs::read_to_string(&linked)
                    .map(|t| anchors(&t))
                    .unwrap_or_default();
                if !headings.contains(anchor) {
                    broken.push(format!("{}: {target} (no such heading)", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A command line split as a shell would (quotes, no expansion), cut at
/// a pipe, a redirection or a comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '|' | '>' | '<' | '#' | ';' | '&') if !in_word || c != '#' => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `bgctl ...` command in the docs' code blocks (indented or
/// fenced), with the file and line it is on.
fn shown_commands() -> Vec<(String, Vec<String>)> {
    let mut commands = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("a readable doc");
        let mut fenced = false;
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if !fenced && !line.starts_with("    ") {
                continue;
            }
            let command = line.trim_start().trim_start_matches("$ ");
            let command = command.strip_prefix("cargo ").unwrap_or(command);
            if let Some(args) = command.strip_prefix("bgctl ") {
                commands.push((
                    format!("{}:{}", file.display(), number + 1),
                    shell_words(args),
                ));
            }
        }
    }
    commands
}

#[test]
fn every_bgctl_command_in_the_docs_parses() {
    let commands = shown_commands();
    assert!(commands.len() > 20, "the docs show bgctl commands");
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let mut refused = Vec::new();
    for (place, args) in &commands {
        // A port where nothing listens: a command that parses fails on
        // connecting (exit 1); clap refuses a bad one with exit 2. Files
        // named in the docs are looked for in the scratch folder.
        let output = Command::new(env!("CARGO_BIN_EXE_bgctl"))
            .args(args)
            .env("BACKGAMMON_ADDR", "127.0.0.1:1")
            .env("BGCTL_TOKENS", scratch.path().join("tokens.json"))
            .env("BACKGAMMON_PLUGIN_DIR", scratch.path())
            .current_dir(scratch.path())
            .output()
            .expect("bgctl runs");
        if output.status.code() == Some(2) {
            refused.push(format!(
                "{place}: bgctl {}\n{}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// The checks above can fail: a made-up option is refused, a link to a
/// file that is not there is found.
#[test]
fn the_doc_checks_catch_a_bad_command_and_a_broken_link() {
    let output = Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .args(["move", "G", "--as", "white", "--no-such-flag", "13/7"])
        .env("BACKGAMMON_ADDR", "127.0.0.1:1")
        .output()
        .expect("bgctl runs");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        link_targets("see [the API](docs/nowhere.md#x) and `[not](code)`"),
        ["docs/nowhere.md#x", "code"]
    );
    assert_eq!(slug(" The API: in short "), "the-api-in-short");
    assert!(anchors("#### T10: a rule <a id=\"t10\"></a>").contains("t10"));
    assert_eq!(
        shell_words(r#"verify --file match.json --black-seed "my seed" > out # note"#),
        ["verify", "--file", "match.json", "--black-seed", "my seed"]
    );
}
